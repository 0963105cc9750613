"""`field__any=[...]`: membership in a list sent as one array parameter.

`field__in` sends one placeholder per value; for the thousands of ids a bulk path moves
(an erasure, a consolidation, a batch) that is thousands of parameters to bind and a
statement text as long. `= ANY(%s)` sends the list as a single PostgreSQL array.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Field, Lookup


@Field.register_lookup
class AnyOf(Lookup):
    lookup_name = "any"
    prepare_rhs = False

    def get_prep_lookup(self) -> Any:
        prep = self.lhs.output_field.get_prep_value
        return [prep(value) for value in self.rhs]

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        values = [
            self.lhs.output_field.get_db_prep_value(value, connection, prepared=True)
            for value in self.rhs
        ]
        return f"{lhs} = ANY(%s)", [*lhs_params, values]
