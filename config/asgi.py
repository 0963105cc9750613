import os

from django.core.asgi import get_asgi_application

from common.startup import freeze_loaded_objects

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_asgi_application()
# As in config/wsgi.py: the URLconf loaded and frozen before the first request.
freeze_loaded_objects(with_urlconf=True)
