"""Capabilities used by scripts: a script must not evidently use one the manifest omits.

Static inspection is a tripwire for the evident cases (an import, a write
call, a curl); it is not a sandbox. Review and the evaluation matrix cover
what a determined script could hide.
"""

from __future__ import annotations

import ast
import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass

from skills.package.budget import Deadline, ScanBudget, budget_exceeded
from skills.package.errors import PackageError

NETWORK = "network"
FILESYSTEM_WRITE = "filesystem:write"
# The capabilities memdesk can spot by reading a script. Declaring any other
# capability is allowed; memdesk just cannot check it statically.
DETECTABLE_CAPABILITIES = frozenset({NETWORK, FILESYSTEM_WRITE})

# A module counts as network access when it is one of these or inside one.
# urllib.parse is left out on purpose: quoting a URL is not a request.
_PY_NETWORK_MODULES = (
    "aiohttp",
    "ftplib",
    "http.client",
    "httpx",
    "imaplib",
    "poplib",
    "requests",
    "smtplib",
    "socket",
    "telnetlib",
    "urllib.request",
    "urllib3",
)
_PY_WRITE_CALLS = frozenset(
    {
        "os.link",
        "os.makedirs",
        "os.mkdir",
        "os.mkfifo",
        "os.remove",
        "os.removedirs",
        "os.rename",
        "os.renames",
        "os.replace",
        "os.rmdir",
        "os.symlink",
        "os.truncate",
        "os.unlink",
        "shutil.copy",
        "shutil.copy2",
        "shutil.copyfile",
        "shutil.copytree",
        "shutil.make_archive",
        "shutil.move",
        "shutil.rmtree",
        "shutil.unpack_archive",
    }
)
# Method names that write whatever object they are called on (pathlib.Path in
# practice). rename/replace are missing because str.replace and
# DataFrame.rename would flag nearly every script; os.rename/os.replace and
# shutil.move are caught as qualified calls above.
_PY_WRITE_METHODS = frozenset(
    {"hardlink_to", "mkdir", "rmdir", "symlink_to", "touch", "unlink", "write_bytes", "write_text"}
)
# open-like calls whose mode is the second positional argument.
_PY_OPEN_CALLS = frozenset({"open", "io.open", "codecs.open"})
_PY_DYNAMIC_IMPORTS = frozenset({"__import__", "importlib.import_module"})
# Calls whose first argument is a shell command line or argv list.
_PY_SHELL_CALLS = frozenset(
    {
        "os.popen",
        "os.system",
        "subprocess.Popen",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "subprocess.run",
    }
)
_PY_WRITE_MODE = re.compile(r"[rbtU]*[wax+][rwaxbtU+]*(?::\w*)?")

_SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh")
_SHELL_SHEBANG = re.compile(r"\b(?:ba|da|k|z)?sh\b")
_SHELL_NETWORK_COMMANDS = frozenset(
    {"curl", "wget", "nc", "ncat", "netcat", "ssh", "scp", "sftp", "telnet", "ftp"}
)
_SHELL_WRITE_COMMANDS = frozenset(
    {"rm", "mv", "cp", "tee", "mkdir", "rmdir", "touch", "ln", "dd", "truncate"}
)
_SHELL_NETWORK_DEVICES = ("/dev/tcp/", "/dev/udp/")
_SHELL_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_SHELL_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_BIN_DIRS = frozenset({"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin"})


@dataclass(frozen=True)
class _Finding:
    capability: str
    line: int
    evidence: str


def reject_undeclared_capabilities(
    texts: dict[str, str],
    *,
    declared: frozenset[str],
    budget: ScanBudget | None = None,
    deadline: Deadline | None = None,
) -> None:
    budget = budget or ScanBudget()
    deadline = deadline or Deadline(budget.max_seconds)
    for path, text in texts.items():
        if not path.startswith("scripts/"):
            continue
        deadline.check(path)
        undeclared: dict[str, _Finding] = {}
        findings = _inspect_script(path, text, budget=budget, deadline=deadline)
        for finding in sorted(findings, key=lambda f: f.line):
            if finding.capability not in declared:
                undeclared.setdefault(finding.capability, finding)
        if undeclared:
            uses = " and ".join(
                f"{cap} ({finding.evidence}, line {finding.line})"
                for cap, finding in sorted(undeclared.items())
            )
            raise PackageError(
                code="capability_undeclared",
                detail=f"{path} uses {uses}, which the manifest does not declare. Add "
                f"{', '.join(sorted(undeclared))} to `capabilities` in SKILL.md or remove the "
                "call.",
                path=path,
            )


def _inspect_script(
    path: str, text: str, *, budget: ScanBudget, deadline: Deadline
) -> list[_Finding]:
    first_line = text.partition("\n")[0]
    shebang = first_line if first_line.startswith("#!") else ""
    if path.endswith(".py") or "python" in shebang:
        return _inspect_python(path, text, budget=budget, deadline=deadline)
    # Redirections only mean something in shell; in other languages `>` is
    # mostly a comparison, so only command names are matched there.
    is_shell = path.endswith(_SHELL_SUFFIXES) or bool(_SHELL_SHEBANG.search(shebang))
    return [
        _Finding(capability, number, evidence)
        for number, line in enumerate(text.splitlines(), start=1)
        for capability, evidence in _shell_capabilities(_shell_tokens(line), redirects=is_shell)
    ]


def _shell_tokens(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    try:
        return list(lexer)
    except ValueError:
        # An unbalanced quote usually opens a multi-line string; plain words
        # still let the line be inspected.
        return line.split()


def _shell_capabilities(tokens: list[str], *, redirects: bool) -> Iterator[tuple[str, str]]:
    for index, token in enumerate(tokens):
        directory, base = posixpath.split(token)
        command = base if directory in _BIN_DIRS else token
        if command in _SHELL_NETWORK_COMMANDS:
            yield NETWORK, command
        elif token.startswith(_SHELL_NETWORK_DEVICES):
            yield NETWORK, f"/dev/{token.split('/')[2]} redirection"
        elif command in _SHELL_WRITE_COMMANDS:
            yield FILESYSTEM_WRITE, command
        elif redirects and token in _SHELL_WRITE_REDIRECTS:
            target = tokens[index + 1] if index + 1 < len(tokens) else ""
            if target not in _SHELL_HARMLESS_TARGETS:
                yield FILESYSTEM_WRITE, f"'{token}' redirection to a file"


def _inspect_python(
    path: str, text: str, *, budget: ScanBudget, deadline: Deadline
) -> list[_Finding]:
    size = len(text.encode("utf-8"))
    if size > budget.max_script_bytes:
        raise budget_exceeded(
            f"{path} is {size} bytes; Python scripts are inspected up to "
            f"{budget.max_script_bytes} bytes.",
            path,
        )
    try:
        tree = ast.parse(text, filename=path)
    except (MemoryError, RecursionError) as exc:
        # CPython's parser gives up on deeply nested expressions (a long chain
        # of unary or binary operators) with one of these.
        raise budget_exceeded(f"{path} nests expressions too deeply to inspect.", path) from exc
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        where = f" (line {line})" if line else ""
        raise PackageError(
            code="package_invalid",
            detail=f"{path} does not parse as Python 3{where}. memdesk inspects every script "
            "before it can be published; fix the script and upload again.",
            path=path,
        ) from exc
    _check_tree_budget(path, tree, budget=budget, deadline=deadline)
    aliases = _import_aliases(tree)
    findings: list[_Finding] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [
                node.module if alias.name == "*" else f"{node.module}.{alias.name}"
                for alias in node.names
            ]
        elif isinstance(node, ast.Call):
            findings += _inspect_python_call(node, aliases)
            continue
        else:
            continue
        findings += [
            _Finding(NETWORK, node.lineno, f"import of {network}")
            for network in map(_network_module, modules)
            if network
        ]
    return findings


def _check_tree_budget(path: str, tree: ast.AST, *, budget: ScanBudget, deadline: Deadline) -> None:
    # Iterative, so a deep tree cannot exhaust the stack while being measured.
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    nodes = 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > budget.max_ast_nodes:
            raise budget_exceeded(
                f"{path} has more than {budget.max_ast_nodes} syntax nodes to inspect.", path
            )
        if depth > budget.max_ast_depth:
            raise budget_exceeded(
                f"{path} nests code more than {budget.max_ast_depth} levels deep.", path
            )
        if nodes % 5_000 == 0:
            deadline.check(path)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _import_aliases(tree: ast.AST) -> dict[str, str]:
    """Map local names to what they import, so `from os import remove as rm` is seen.

    Scopes are ignored: a script rebinding an imported name is rare, and
    erring towards a finding is the safe side.
    """
    aliases: dict[str, str] = {}
    known = _PY_WRITE_CALLS | _PY_SHELL_CALLS | _PY_OPEN_CALLS | _PY_DYNAMIC_IMPORTS
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update({alias.asname: alias.name for alias in node.names if alias.asname})
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name == "*":
                    prefix = node.module + "."
                    aliases.update(
                        {
                            name.removeprefix(prefix): name
                            for name in known
                            if name.startswith(prefix)
                        }
                    )
                else:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _qualified_name(func: ast.expr, aliases: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    parts.append(aliases.get(func.id, func.id))
    return ".".join(reversed(parts))


def _network_module(module: str) -> str | None:
    return next(
        (
            network
            for network in _PY_NETWORK_MODULES
            if module == network or module.startswith(network + ".")
        ),
        None,
    )


def _inspect_python_call(call: ast.Call, aliases: dict[str, str]) -> list[_Finding]:
    name = _qualified_name(call.func, aliases)
    method = call.func.attr if isinstance(call.func, ast.Attribute) else None
    first = call.args[0] if call.args else None
    findings: list[_Finding] = []
    if name in _PY_WRITE_CALLS:
        findings.append(_Finding(FILESYSTEM_WRITE, call.lineno, f"{name}()"))
    elif method in _PY_WRITE_METHODS:
        findings.append(_Finding(FILESYSTEM_WRITE, call.lineno, f".{method}()"))
    # open(file, mode) takes the mode second; Path.open(mode) first, and
    # tarfile/gzip/zipfile .open(name, mode) second again.
    if name in _PY_OPEN_CALLS:
        positions: tuple[int, ...] = (1,)
    elif method == "open":
        positions = (0, 1)
    else:
        positions = ()
    if positions and _opens_for_writing(call, positions=positions):
        findings.append(_Finding(FILESYSTEM_WRITE, call.lineno, "open() for writing"))
    if name in _PY_DYNAMIC_IMPORTS and isinstance(first, ast.Constant):
        network = _network_module(str(first.value))
        if network:
            findings.append(_Finding(NETWORK, call.lineno, f"import of {network}"))
    if name in _PY_SHELL_CALLS and first is not None:
        findings += [
            _Finding(capability, call.lineno, f"{evidence} via {name}()")
            for capability, evidence in _python_shell_capabilities(first)
        ]
    return findings


def _opens_for_writing(call: ast.Call, *, positions: tuple[int, ...]) -> bool:
    candidates = [call.args[i] for i in positions if i < len(call.args)]
    candidates += [keyword.value for keyword in call.keywords if keyword.arg == "mode"]
    return any(
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _PY_WRITE_MODE.fullmatch(node.value) is not None
        for node in candidates
    )


def _python_shell_capabilities(command: ast.expr) -> Iterator[tuple[str, str]]:
    if isinstance(command, ast.Constant) and isinstance(command.value, str):
        for line in command.value.splitlines():
            yield from _shell_capabilities(_shell_tokens(line), redirects=True)
    elif isinstance(command, ast.List | ast.Tuple):
        argv = [
            node.value
            for node in command.elts
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        ]
        # An argv list runs without a shell, so '>' in it is just an argument.
        yield from _shell_capabilities(argv, redirects=False)
