"""The app's two components: one ServerApp and one ClientApp for every federated protocol.

The ServerApp reads the job file named by the run config's ``job-path`` and runs its ``protocol``'s central
role; the ClientApp answers ``query.<protocol>`` messages with that protocol's party. A protocol's modules are
imported only when one of its messages or jobs arrives. To add a protocol: one ``@client.query`` handler and
one entry in ``SERVER_MAINS``.
"""
import importlib
import json
from pathlib import Path

from flwr.app import Context, Message
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid, ServerApp

__all__ = ["SERVER_MAINS", "client", "server"]

#: protocol -> module with ``server_main(grid, context)``
SERVER_MAINS = {"p3ls": "engine.methods.p3ls.flower_roles"}

server = ServerApp()
client = ClientApp()


@server.main()
def _server(grid: Grid, context: Context) -> None:
    job = json.loads(Path(str(context.run_config["job-path"])).read_text())
    importlib.import_module(SERVER_MAINS[job["protocol"]]).server_main(grid, context)


@client.query("p3ls")
def _p3ls_party(msg: Message, context: Context) -> Message:
    from engine.methods.p3ls.flower_roles import party_main

    return party_main(msg, context)
