"""The API server judge writes each DRA object again in every served version
(support.served). Its upgrade must be what draguard's own conversion (dra.convert.to_v1,
behind the api-version-deprecated fix) makes of every v1beta1 and v1beta2 object of the
corpus, and going down to v1beta1 and back up must give the object again."""

from __future__ import annotations

import yaml

from draguard.core.fixes import apply_edits, plain
from draguard.dra.convert import to_v1
from draguard.model.manifest import Manifest
from support import served
from support.paths import corpus_files


def _objects(versions) -> list[dict]:
    found = []
    for path in corpus_files():
        try:
            documents = list(yaml.safe_load_all(path.read_text()))
        except yaml.YAMLError:
            continue
        found += [d for d in documents if isinstance(d, dict) and d.get("kind") in served.CONVERTIBLE
                  and str(d.get("apiVersion")) in {f"resource.k8s.io/{v}" for v in versions}]
    return found


def test_the_upgrade_is_draguards_own_conversion():
    objects = _objects(("v1beta1", "v1beta2"))
    assert len(objects) > 10
    for obj in objects:
        converted = apply_edits(obj, to_v1(Manifest.from_data(obj)))[0]
        assert served.in_version(obj, "v1") == converted, obj.get("metadata")


def test_down_to_v1beta1_and_back_gives_the_object_again():
    objects = _objects(("v1beta2", "v1"))
    assert len(objects) > 10
    for obj in objects:
        down = served.in_version(obj, "v1beta1")
        assert served.in_version(down, obj["apiVersion"].split("/")[1]) == plain(obj)
