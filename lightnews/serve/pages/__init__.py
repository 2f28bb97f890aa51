"""The site's pages: one module per page (or family of pages), each handler a plain function.

Every handler takes ``(site, request)`` (the :class:`~lightnews.serve.site.Site`
made once by ``serve.app.create_app``) and answers one request. A page and its
JSON twin under ``/api`` are one handler: it reads the data once and gives
:meth:`~lightnews.serve.site.Site.respond` how to draw each form (JSON, a feed,
HTML). The route table in ``serve/app.py`` says which address goes where.

Where a change goes: a new page is a module here, its template in
``serve/templates``, its route in ``serve/app.py``, and its ``/api`` twin
declared in ``serve/api.py`` (the OpenAPI description).
"""
