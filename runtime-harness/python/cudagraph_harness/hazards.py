"""The hazard catalog as the Python tools see it.

Everything here comes from catalog/Hazards.def through catalog/catalog.py:
ids, check names, check status (Implemented or Planned) and the measured
outcome. Nothing keeps a second list of hazards.
"""

import os
import re
import sys

_DEFAULT_CATALOG = os.path.normpath(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, os.pardir,
    "catalog"))

_VERSION_SUFFIX = re.compile(r"(_v\d+|_ptsz|_ptds)+$")
_QUOTE = re.compile(r'"([^"]{9,})"')


class Catalog:
    def __init__(self, catalog_dir=None):
        catalog_dir = catalog_dir or os.environ.get("CUDAGRAPH_CATALOG_DIR") or _DEFAULT_CATALOG
        path = os.path.join(catalog_dir, "catalog.py")
        if not os.path.isfile(path):
            raise FileNotFoundError("no catalog at %s" % catalog_dir)
        sys.path.insert(0, catalog_dir)
        try:
            import catalog  # noqa: F401  (catalog/catalog.py)
        finally:
            sys.path.pop(0)
        self.module = catalog
        self.checks, self.hazards = catalog.load(os.path.join(catalog_dir, "Hazards.def"))
        self.by_id = {h["id"]: h for h in self.hazards}
        self.check_by_name = {c["name"]: c for c in self.checks}

    def hazard(self, hazard_id):
        return self.by_id.get(hazard_id)

    def check_status(self, check_name):
        check = self.check_by_name.get(check_name)
        return check["status"] if check else None

    def check_of(self, hazard_id):
        hazard = self.by_id.get(hazard_id)
        return hazard["check"] if hazard else None

    def is_planned(self, hazard_id):
        return self.check_status(self.check_of(hazard_id)) == "Planned"

    def for_api(self, api):
        """The first hazard whose Names match a runtime/driver API name."""
        if not api:
            return None
        for name in (api, _VERSION_SUFFIX.sub("", api)):
            for hazard in self.hazards:
                if (hazard["names"] and hazard["kind"] not in ("PinnedFlag", "LegacyStream")
                        and self.module.name_matches(hazard["names"], name)):
                    return hazard
        return None

    def for_message(self, message):
        """The one hazard whose Outcome quotes a message that this framework
        message contains (libtorch's wording); None when none or several."""
        if not message:
            return None
        found = [h for h in self.hazards
                 if any(q.rstrip(".") in message for q in _QUOTE.findall(h["outcome"]))]
        return found[0] if len(found) == 1 else None

    def for_error_name(self, result_name):
        """The one hazard without an API list whose Outcome names this error
        (cudaErrorStreamCaptureUnjoined -> unjoined-fork)."""
        if not result_name:
            return None
        found = [h for h in self.hazards if not h["names"] and result_name in h["outcome"]]
        return found[0] if len(found) == 1 else None

    def for_finding(self, check, api):
        """The hazard a static finding of `check` about `api` reports."""
        candidates = [h for h in self.hazards if h["check"] == check]
        if len(candidates) == 1 or not api:
            return candidates[0] if len(candidates) == 1 else None
        prefixes = ("", "at::", "c10::", "at::cuda::", "c10::cuda::", "torch::cuda::")
        for hazard in candidates:
            if hazard["names"] and any(self.module.name_matches(hazard["names"], p + api)
                                       for p in prefixes):
                return hazard
        last = api.split("::")[-1]
        for hazard in candidates:
            if any(n.lstrip("!").split("::")[-1] == last for n in hazard["names"]):
                return hazard
        return None
