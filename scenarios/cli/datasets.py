"""``fl-cosim datasets``: where each dataset is and whether it verifies; ``download NAME``."""

from __future__ import annotations

import sys

from scenarios.cli.common import add_data_dir, add_json, table


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "datasets",
        help="list datasets (found, where, verified) or download one",
        description="'fl-cosim datasets' lists every dataset; 'fl-cosim datasets download NAME' fetches it from "
        "its canonical source with checksum verification.",
    )
    parser.add_argument("action", nargs="?", choices=("list", "download"), default="list")
    parser.add_argument("name", nargs="?", help="dataset to download")
    parser.add_argument("--no-verify", action="store_true", help="skip md5 checks when listing (faster)")
    add_data_dir(parser)
    add_json(parser)


def execute(args):
    from scenarios.datasets import dataset_status, download_dataset, resolve_data_dir
    from scenarios.errors import UsageError

    data_dir = resolve_data_dir(args.data_dir)
    if args.action == "download":
        if not args.name:
            raise UsageError("datasets download needs a NAME (see 'fl-cosim datasets')")
        paths = download_dataset(args.name, data_dir, report=lambda line: print(line, file=sys.stderr))
        return {"downloaded": [str(p) for p in paths]}, "\n".join(f"downloaded {p}" for p in paths)
    rows = dataset_status(data_dir, verify=not args.no_verify)
    text = f"data dir: {data_dir}\n" + table(
        ["dataset", "found", "verified", "where / detail"],
        [[r["name"], "yes" if r["found"] else "no", {True: "yes", False: "NO", None: "-"}[r["verified"]], r["path"] or r["detail"]] for r in rows],
    )
    return {"data_dir": str(data_dir), "datasets": rows}, text
