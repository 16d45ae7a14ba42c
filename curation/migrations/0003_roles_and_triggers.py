"""Role groups, and the rules that only the database can keep under concurrency:
a spec dependency stays within one task, and a ready release never changes."""

from django.db import migrations

ROLE_GROUPS = ("reviewer", "curator", "admin")

SQLITE_SQL = [
    """
    CREATE TRIGGER curation_specdep_same_task_insert BEFORE INSERT ON curation_specdependency
    FOR EACH ROW WHEN
        (SELECT task_id FROM curation_specification WHERE id = NEW.from_spec_id) != NEW.task_id
        OR (SELECT task_id FROM curation_specification WHERE id = NEW.to_spec_id) != NEW.task_id
    BEGIN
        SELECT RAISE(ABORT, 'specdep_same_task: a spec cannot depend on a spec of another task');
    END
    """,
    """
    CREATE TRIGGER curation_specdep_same_task_update BEFORE UPDATE ON curation_specdependency
    FOR EACH ROW WHEN
        (SELECT task_id FROM curation_specification WHERE id = NEW.from_spec_id) != NEW.task_id
        OR (SELECT task_id FROM curation_specification WHERE id = NEW.to_spec_id) != NEW.task_id
    BEGIN
        SELECT RAISE(ABORT, 'specdep_same_task: a spec cannot depend on a spec of another task');
    END
    """,
    # Updates only: Django's test flush on SQLite deletes rows, and deletes are refused by the
    # application (model, admin, API); PostgreSQL below refuses them in the database as well.
    """
    CREATE TRIGGER curation_release_immutable_update BEFORE UPDATE ON curation_release
    FOR EACH ROW WHEN OLD.status = 'ready'
    BEGIN
        SELECT RAISE(ABORT, 'release_immutable: a ready release never changes');
    END
    """,
    """
    CREATE TRIGGER curation_releasetask_immutable_insert BEFORE INSERT ON curation_releasetask
    FOR EACH ROW WHEN (SELECT status FROM curation_release WHERE id = NEW.release_id) = 'ready'
    BEGIN
        SELECT RAISE(ABORT, 'release_immutable: a ready release never changes');
    END
    """,
    """
    CREATE TRIGGER curation_releasetask_immutable_update BEFORE UPDATE ON curation_releasetask
    FOR EACH ROW WHEN (SELECT status FROM curation_release WHERE id = OLD.release_id) = 'ready'
    BEGIN
        SELECT RAISE(ABORT, 'release_immutable: a ready release never changes');
    END
    """,
]

SQLITE_REVERSE = [
    "DROP TRIGGER IF EXISTS curation_specdep_same_task_insert",
    "DROP TRIGGER IF EXISTS curation_specdep_same_task_update",
    "DROP TRIGGER IF EXISTS curation_release_immutable_update",
    "DROP TRIGGER IF EXISTS curation_releasetask_immutable_insert",
    "DROP TRIGGER IF EXISTS curation_releasetask_immutable_update",
]

POSTGRES_SQL = [
    """
    CREATE OR REPLACE FUNCTION curation_specdep_same_task() RETURNS trigger AS $$
    BEGIN
        IF (SELECT task_id FROM curation_specification WHERE id = NEW.from_spec_id) <> NEW.task_id
           OR (SELECT task_id FROM curation_specification WHERE id = NEW.to_spec_id) <> NEW.task_id
        THEN
            RAISE EXCEPTION 'specdep_same_task: a spec cannot depend on a spec of another task'
                USING ERRCODE = '23514';
        END IF;
        RETURN NEW;
    END;
    $$ LANGUAGE plpgsql
    """,
    """
    CREATE TRIGGER curation_specdep_same_task BEFORE INSERT OR UPDATE ON curation_specdependency
    FOR EACH ROW EXECUTE FUNCTION curation_specdep_same_task()
    """,
    """
    CREATE OR REPLACE FUNCTION curation_release_immutable() RETURNS trigger AS $$
    BEGIN
        IF OLD.status = 'ready' THEN
            RAISE EXCEPTION 'release_immutable: a ready release never changes'
                USING ERRCODE = '23514';
        END IF;
        IF TG_OP = 'DELETE' THEN
            RETURN OLD;
        END IF;
        RETURN NEW;
    END;
    $$ LANGUAGE plpgsql
    """,
    """
    CREATE TRIGGER curation_release_immutable BEFORE UPDATE OR DELETE ON curation_release
    FOR EACH ROW EXECUTE FUNCTION curation_release_immutable()
    """,
    """
    CREATE OR REPLACE FUNCTION curation_releasetask_immutable() RETURNS trigger AS $$
    DECLARE
        release_status text;
    BEGIN
        SELECT status INTO release_status FROM curation_release
        WHERE id = COALESCE(NEW.release_id, OLD.release_id);
        IF release_status = 'ready' THEN
            RAISE EXCEPTION 'release_immutable: a ready release never changes'
                USING ERRCODE = '23514';
        END IF;
        IF TG_OP = 'DELETE' THEN
            RETURN OLD;
        END IF;
        RETURN NEW;
    END;
    $$ LANGUAGE plpgsql
    """,
    """
    CREATE TRIGGER curation_releasetask_immutable
    BEFORE INSERT OR UPDATE OR DELETE ON curation_releasetask
    FOR EACH ROW EXECUTE FUNCTION curation_releasetask_immutable()
    """,
]

POSTGRES_REVERSE = [
    "DROP TRIGGER IF EXISTS curation_specdep_same_task ON curation_specdependency",
    "DROP FUNCTION IF EXISTS curation_specdep_same_task()",
    "DROP TRIGGER IF EXISTS curation_release_immutable ON curation_release",
    "DROP FUNCTION IF EXISTS curation_release_immutable()",
    "DROP TRIGGER IF EXISTS curation_releasetask_immutable ON curation_releasetask",
    "DROP FUNCTION IF EXISTS curation_releasetask_immutable()",
]


def create_triggers(apps, schema_editor):
    statements = POSTGRES_SQL if schema_editor.connection.vendor == "postgresql" else SQLITE_SQL
    for statement in statements:
        schema_editor.execute(statement)


def drop_triggers(apps, schema_editor):
    statements = (
        POSTGRES_REVERSE if schema_editor.connection.vendor == "postgresql" else SQLITE_REVERSE
    )
    for statement in statements:
        schema_editor.execute(statement)


def create_role_groups(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name in ROLE_GROUPS:
        Group.objects.get_or_create(name=name)


def remove_role_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLE_GROUPS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("curation", "0002_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.RunPython(create_role_groups, remove_role_groups),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
