"""``memdir ui``: a local web app over one memory dir (and its team dir).

Layout: :mod:`~memdir.ui.context` (what the app is given), :mod:`~memdir.ui.security` (the
token, host and same-origin checks every request passes), :mod:`~memdir.ui.render` (templates,
Markdown, flash messages), one module per page under :mod:`memdir.ui.pages`,
:mod:`~memdir.ui.app` (assembly) and :mod:`~memdir.ui.server` (uvicorn, the browser).

Invariants: every page reads and writes through the same library calls as the CLI (the store,
recall's explain, doctor, dream, the hook log); memory files are untrusted, so every field is
escaped by the templates and Markdown is rendered with raw HTML off; ``read_only`` means the
write routes do not exist at all.
"""
