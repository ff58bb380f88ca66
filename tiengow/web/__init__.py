"""``tiengow serve``: Tien Gow in the browser. Play the bots, watch bots play (with each bot's
view of its choice), replay saved hand records trick by trick, and look at a league's table.

A layer on top: it uses the core, the agents and the terminal UI's words; nothing imports it.
Starlette and uvicorn come with the ``web`` extra (``pip install -e ".[web]"``); the page is
plain HTML, CSS and JavaScript in ``static/``, with no build step and nothing fetched from
elsewhere.

    web/match.py     a match on the server: the person's moves, the bots', records saved
    web/views.py     games as JSON for the page (the words of tiengow.ui.render)
    web/records.py   the records folder: listing, reading only inside it, replay and league views
    web/app.py       the ASGI app: sessions, the JSON API, the static files
    web/server.py    ``serve()``: bind, make the records folder, run uvicorn
"""
