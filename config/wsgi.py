import os

from django.core.wsgi import get_wsgi_application

from common.startup import freeze_loaded_objects

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
# The URLconf (every view, serializer and form) is loaded by the first request
# otherwise; loaded here, it is frozen with the rest (see freeze_loaded_objects).
freeze_loaded_objects(with_urlconf=True)
