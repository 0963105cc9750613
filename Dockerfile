FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 STATIC_ROOT=/app/staticfiles
WORKDIR /app
RUN useradd --create-home memdesk
COPY pyproject.toml README.md ./
COPY . .
# torch from the CPU index first, so resolving the project never pulls a CUDA build.
RUN pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cpu torch==2.13.0 \
    && pip install --no-cache-dir . './clients/python[mcp]' \
    && DEBUG=1 DATABASE_URL=postgres://build@localhost/build REDIS_URL=redis://localhost:6379/0 \
       python manage.py collectstatic --no-input \
    && chown -R memdesk /app
USER memdesk
EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
