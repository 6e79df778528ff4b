"""Alembic's entry point: migrates the connection that `docubot.migrations.upgrade` hands over."""

from alembic import context

context.configure(connection=context.config.attributes["connection"], transaction_per_migration=False)
with context.begin_transaction():
    context.run_migrations()
