"""The ``glint`` command line's commands: ``sql``, ``shell``, ``tpch`` and what they share."""
