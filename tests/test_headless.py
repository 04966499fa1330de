"""The core never imports a UI toolkit (docs/architecture.md, "Layers")."""

import subprocess
import sys


def test_core_modules_do_not_import_textual():
    code = (
        "import sys, rmaudit.metrics, rmaudit.run, rmaudit.store, rmaudit.plugins, rmaudit.cli;"
        "from rmaudit.plugins import load_plugins; load_plugins();"
        "bad = sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('textual', 'matplotlib', 'torch', 'ray'));"
        "print(','.join(bad))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""
