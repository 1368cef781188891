"""``python -m training.retriever [--config FILE] [--set FIELD=VALUE …]``: train the retriever."""

from __future__ import annotations

from .cli import main

if __name__ == "__main__":
    main()
