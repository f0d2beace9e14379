"""The routes of the HTTP API, one router per room: the spaces, search, set queries, items, the map, comparisons, writes.

:func:`~repspace.interfaces.server.app.create_app` includes each :data:`ROUTERS` router; each route takes what
it needs from :mod:`repspace.interfaces.server.deps`.

Examples
--------
>>> sorted(r.routes[0].path for r in ROUTERS)[:2]
['/api/v1/compare/{a}/{b}', '/api/v1/health']
"""

from repspace.interfaces.server.routes.compare import router as compare
from repspace.interfaces.server.routes.items import router as items
from repspace.interfaces.server.routes.map import router as map_routes
from repspace.interfaces.server.routes.search import router as search
from repspace.interfaces.server.routes.set_search import router as set_search
from repspace.interfaces.server.routes.spaces import router as spaces
from repspace.interfaces.server.routes.write import router as write

#: Every router, in the order the OpenAPI schema lists their routes.
ROUTERS = (spaces, search, set_search, items, map_routes, compare, write)

__all__ = ["ROUTERS"]
