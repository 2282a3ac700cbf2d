"""Hand-written resource.k8s.io objects near upstream's validation limits, each with the
real kube-apiserver's verdict (accepted or not) by server-side dry-run on 1.37.2, as measured
(test_apiserver_judge re-asks the server whenever Go is present). draguard's validity rules
must find an error exactly in those the server refuses (for pods, with the claim-wiring
rules that mirror the pod's own validation).

Left out, each said elsewhere: a request with both or neither of `exactly` and
`firstAvailable`, or an empty deviceClassName (request-device-class reports them); a field a
subrequest does not have (schema-invalid, as kubectl's strict field validation; the server
alone only warns); a capacity without its `value` (schema-invalid, as the OpenAPI schema
requires it; the server reads a zero quantity)."""



def _claim(devices, name="c"):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"devices": devices}}


def _ex(**fields):
    """Request r0, exactly: a device of class gpu.example.com with these fields."""
    return {"name": "r0", "exactly": {"deviceClassName": "gpu.example.com", **fields}}


def _slice(spec, name="s"):
    """A slice of pool p on node-0, these fields set over it."""
    base = {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "node-0"}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {**base, **spec}}


def _class(spec, name="gpu.example.com"):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}

#: (what it tries, whether the server accepts it, the object)
OBJECTS = [
 ("count 0", True, _claim({"requests": [_ex(count=0)]})),
 ("count -1", False, _claim({"requests": [_ex(count=-1)]})),
 ("count 1 with All", False, _claim({"requests": [_ex(allocationMode="All", count=1)]})),
 ("mode bogus", False, _claim({"requests": [_ex(allocationMode="Some")]})),
 ("mode lowercase", False, _claim({"requests": [_ex(allocationMode="all")]})),
 ("count huge", True, _claim({"requests": [_ex(count=33)]})),
 ("count 32", True, _claim({"requests": [_ex(count=32)]})),
 ("two requests same name", False, _claim({"requests": [_ex(), _ex()]})),
 ("request name invalid", False, _claim({"requests": [{"name": "R_0", "exactly": {"deviceClassName": "gpu.example.com"}}]})),
 ("request name long", False, _claim({"requests": [{"name": "r" * 64, "exactly": {"deviceClassName": "gpu.example.com"}}]})),
 ("request name 63", True, _claim({"requests": [{"name": "r" * 63, "exactly": {"deviceClassName": "gpu.example.com"}}]})),
 ("no requests", True, _claim({"requests": []})),
 ("33 requests", False, _claim({"requests": [{"name": f"r{i}", "exactly": {"deviceClassName": "gpu.example.com"}} for i in range(33)]})),
 ("class name invalid", False, _claim({"requests": [{"name": "r0", "exactly": {"deviceClassName": "GPU"}}]})),
 ("class name missing", False, _claim({"requests": [{"name": "r0", "exactly": {}}]})),
 ("fa 9", False, _claim({"requests": [{"name": "r0", "firstAvailable": [{"name": f"s{i}", "deviceClassName": "a"} for i in range(9)]}]})),
 ("fa 8", True, _claim({"requests": [{"name": "r0", "firstAvailable": [{"name": f"s{i}", "deviceClassName": "a"} for i in range(8)]}]})),
 ("fa dup", False, _claim({"requests": [{"name": "r0", "firstAvailable": [{"name": "s", "deviceClassName": "a"}, {"name": "s", "deviceClassName": "a"}]}]})),
 ("fa count 0", True, _claim({"requests": [{"name": "r0", "firstAvailable": [{"name": "s", "deviceClassName": "a", "count": 0}]}]})),
 ("selector empty cel", False, _claim({"requests": [_ex(selectors=[{"cel": {"expression": ""}}])]})),
 ("selector no cel", False, _claim({"requests": [_ex(selectors=[{}])]})),
 ("33 selectors", False, _claim({"requests": [_ex(selectors=[{"cel": {"expression": "true"}}] * 33)]})),
 ("32 selectors", True, _claim({"requests": [_ex(selectors=[{"cel": {"expression": "true"}}] * 32)]})),
 ("constraint unknown request", False, _claim({"requests": [_ex()], "constraints": [{"requests": ["nope"], "matchAttribute": "gpu.example.com/model"}]})),
 ("constraint sub ref", True, _claim({"requests": [{"name": "r0", "firstAvailable": [{"name": "s", "deviceClassName": "a"}]}], "constraints": [{"requests": ["r0/s"], "matchAttribute": "gpu.example.com/model"}]})),
 ("constraint bad sub ref", False, _claim({"requests": [{"name": "r0", "firstAvailable": [{"name": "s", "deviceClassName": "a"}]}], "constraints": [{"requests": ["r0/t"], "matchAttribute": "gpu.example.com/model"}]})),
 ("constraint unqualified", False, _claim({"requests": [_ex()], "constraints": [{"matchAttribute": "model"}]})),
 ("constraint empty", False, _claim({"requests": [_ex()], "constraints": [{"matchAttribute": ""}]})),
 ("constraint none", False, _claim({"requests": [_ex()], "constraints": [{}]})),
 ("constraint dup req", False, _claim({"requests": [_ex()], "constraints": [{"requests": ["r0", "r0"], "matchAttribute": "gpu.example.com/model"}]})),
 ("constraint distinct", True, _claim({"requests": [_ex()], "constraints": [{"distinctAttribute": "gpu.example.com/model"}]})),
 ("constraint both", True, _claim({"requests": [_ex()], "constraints": [{"distinctAttribute": "gpu.example.com/model", "matchAttribute": "gpu.example.com/model"}]})),
 ("constraint long attr", False, _claim({"requests": [_ex()], "constraints": [{"matchAttribute": "gpu.example.com/" + "m" * 64}]})),
 ("constraint bad domain", False, _claim({"requests": [_ex()], "constraints": [{"matchAttribute": "GPU/model"}]})),
 ("config unknown request", False, _claim({"requests": [_ex()], "config": [{"requests": ["nope"], "opaque": {"driver": "gpu.example.com", "parameters": {}}}]})),
 ("config no opaque", False, _claim({"requests": [_ex()], "config": [{}]})),
 ("config bad driver", True, _claim({"requests": [_ex()], "config": [{"opaque": {"driver": "GPU", "parameters": {}}}]})),
 ("config params not object", False, _claim({"requests": [_ex()], "config": [{"opaque": {"driver": "gpu.example.com", "parameters": [1]}}]})),
 ("config params missing", False, _claim({"requests": [_ex()], "config": [{"opaque": {"driver": "gpu.example.com"}}]})),
 ("config params big", False, _claim({"requests": [_ex()], "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"a": "x" * 11000}}}]})),
 ("tolerations bad op", False, _claim({"requests": [_ex(tolerations=[{"key": "k", "operator": "Foo"}])]})),
 ("tolerations exists value", False, _claim({"requests": [_ex(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}])]})),
 ("tolerations bad effect", False, _claim({"requests": [_ex(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoWay"}])]})),
 ("tolerations seconds noschedule", True, _claim({"requests": [_ex(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}])]})),
 ("tolerations bad key", False, _claim({"requests": [_ex(tolerations=[{"key": "bad key", "operator": "Exists"}])]})),
 ("tolerations empty key equal", True, _claim({"requests": [_ex(tolerations=[{"operator": "Equal", "value": "v"}])]})),
 ("capacity requests", True, _claim({"requests": [_ex(capacity={"requests": {"memory": "1Gi"}})]})),
 ("capacity bad name", True, _claim({"requests": [_ex(capacity={"requests": {"Memory!": "1Gi"}})]})),
 ("capacity negative", True, _claim({"requests": [_ex(capacity={"requests": {"memory": "-1Gi"}})]})),
 ("capacity bad quantity", False, _claim({"requests": [_ex(capacity={"requests": {"memory": "1GB"}})]})),
 ("slice no pool name", False, _slice({"pool": {"name": "", "generation": 1, "resourceSliceCount": 1}})),
 ("slice pool name slash", True, _slice({"pool": {"name": "a/b", "generation": 1, "resourceSliceCount": 1}})),
 ("slice pool name bad", False, _slice({"pool": {"name": "A_B", "generation": 1, "resourceSliceCount": 1}})),
 ("slice count 0", False, _slice({"pool": {"name": "p", "generation": 1, "resourceSliceCount": 0}})),
 ("slice gen -1", False, _slice({"pool": {"name": "p", "generation": -1, "resourceSliceCount": 1}})),
 ("slice no node", False, {**_slice({}), "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}}}),
 ("slice two placements", False, _slice({"allNodes": True})),
 ("slice allNodes false", False, {**_slice({}), "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "allNodes": False}}),
 ("slice pdns false", False, {**_slice({}), "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "perDeviceNodeSelection": False}}),
 ("slice bad driver", True, _slice({"driver": "GPU"})),
 ("slice driver long", False, _slice({"driver": "a" * 64 + ".com"})),
 ("slice dup devices", False, _slice({"devices": [{"name": "d"}, {"name": "d"}]})),
 ("slice device bad name", False, _slice({"devices": [{"name": "D_0"}]})),
 ("slice 129 devices", False, _slice({"devices": [{"name": f"d{i}"} for i in range(129)]})),
 ("slice 128 devices", True, _slice({"devices": [{"name": f"d{i}"} for i in range(128)]})),
 ("slice attr two values", False, _slice({"devices": [{"name": "d", "attributes": {"a": {"int": 1, "string": "x"}}}]})),
 ("slice attr no value", False, _slice({"devices": [{"name": "d", "attributes": {"a": {}}}]})),
 ("slice attr bad version", False, _slice({"devices": [{"name": "d", "attributes": {"a": {"version": "1.0"}}}]})),
 ("slice attr long string", False, _slice({"devices": [{"name": "d", "attributes": {"a": {"string": "x" * 65}}}]})),
 ("slice attr 64 string", True, _slice({"devices": [{"name": "d", "attributes": {"a": {"string": "x" * 64}}}]})),
 ("slice attr bad name", False, _slice({"devices": [{"name": "d", "attributes": {"a b": {"int": 1}}}]})),
 ("slice attr qualified other domain", True, _slice({"devices": [{"name": "d", "attributes": {"other.com/a": {"int": 1}}}]})),
 ("slice attr bad domain", True, _slice({"devices": [{"name": "d", "attributes": {"Other/a": {"int": 1}}}]})),
 ("slice attr name long", False, _slice({"devices": [{"name": "d", "attributes": {"a" * 65: {"int": 1}}}]})),
 ("slice 33 attrs", False, _slice({"devices": [{"name": "d", "attributes": {f"a{i}": {"int": i} for i in range(33)}}]})),
 ("slice capacity negative", True, _slice({"devices": [{"name": "d", "capacity": {"m": {"value": "-1"}}}]})),
 ("slice capacity bad", False, _slice({"devices": [{"name": "d", "capacity": {"m": {"value": "1GB"}}}]})),
 ("slice taint bad effect", False, _slice({"devices": [{"name": "d", "taints": [{"key": "k", "effect": "Foo"}]}]})),
 ("slice taint no effect", False, _slice({"devices": [{"name": "d", "taints": [{"key": "k"}]}]})),
 ("slice taint bad key", False, _slice({"devices": [{"name": "d", "taints": [{"key": "bad key", "effect": "NoSchedule"}]}]})),
 ("slice taint dup", True, _slice({"devices": [{"name": "d", "taints": [{"key": "k", "effect": "NoSchedule"}, {"key": "k", "effect": "NoSchedule"}]}]})),
 ("slice counters and devices", False, _slice({"devices": [{"name": "d"}], "sharedCounters": [{"name": "s", "counters": {"c": {"value": "1"}}}]})),
 ("slice counters dup", False, _slice({"sharedCounters": [{"name": "s", "counters": {"c": {"value": "1"}}}, {"name": "s", "counters": {"c": {"value": "1"}}}]})),
 ("slice counters empty", False, _slice({"sharedCounters": [{"name": "s", "counters": {}}]})),
 ("slice consumes unknown", True, _slice({"devices": [{"name": "d", "consumesCounters": [{"counterSet": "nope", "counters": {"c": {"value": "1"}}}]}]})),
 ("slice consumes dup", False, _slice({"devices": [{"name": "d", "consumesCounters": [{"counterSet": "s", "counters": {"c": {"value": "1"}}}, {"counterSet": "s", "counters": {"c": {"value": "1"}}}]}]})),
 ("slice device nodeName without pdns", False, _slice({"devices": [{"name": "d", "nodeName": "node-0"}]})),
 ("slice pdns device without placement", False, {**_slice({}), "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "perDeviceNodeSelection": True, "devices": [{"name": "d"}]}}),
 ("slice nodeSelector empty", False, {**_slice({}), "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "nodeSelector": {"nodeSelectorTerms": []}}}),
 ("slice nodeSelector two terms", False, {**_slice({}), "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"matchExpressions": [{"key": "b", "operator": "Exists"}]}]}}}),
 ("slice nodeSelector bad op", False, {**_slice({}), "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Foo"}]}]}}}),
 ("slice nodeName bad", False, _slice({"nodeName": "Node_0"})),
 ("class selector invalid", False, _class({"selectors": [{"cel": {"expression": "device.foo"}}]})),
 ("class 33 selectors", False, _class({"selectors": [{"cel": {"expression": "true"}}] * 33})),
 ("class config no opaque", False, _class({"config": [{}]})),
 ("class extended bad", False, _class({"extendedResourceName": "gpu"})),
 ("class extended ok", True, _class({"extendedResourceName": "example.com/gpu"})),
 ("class extended native", False, _class({"extendedResourceName": "cpu"})),
 ("class extended kubernetes.io", False, _class({"extendedResourceName": "kubernetes.io/gpu"})),
 ("class extended requests.", False, _class({"extendedResourceName": "requests.example.com/gpu"})),
 ("class name bad", False, _class({}, name="GPU")),
 ("class name long", False, _class({}, name="a" * 254)),
]


def _devices(devices):
    return _slice({"devices": devices})


def _capacity(policy, value="10Gi", shared=True):
    """A device whose capacity `mem` of `value` has this request policy; allowMultipleAllocations `shared`."""
    device = {"name": "d", "capacity": {"mem": {"value": value, "requestPolicy": policy}}}
    if shared is not None:
        device["allowMultipleAllocations"] = shared
    return _devices([device])


def _range(**bounds):
    return {"validRange": bounds}


#: consumable capacity's request policies and binding conditions (DRAConsumableCapacity and
#: DRADeviceBindingConditions on, DRAFractionalCapacityRange at its 1.37 default)
OBJECTS += [
 ("policy not shared", False, _capacity({"default": "1Gi"}, shared=None)),
 ("policy shared false", False, _capacity({"default": "1Gi"}, shared=False)),
 ("policy default only", True, _capacity({"default": "1Gi"})),
 ("policy empty", True, _capacity({})),
 ("values ok", True, _capacity({"default": "1Gi", "validValues": ["1Gi", "2Gi"]})),
 ("values no default", False, _capacity({"validValues": ["1Gi", "2Gi"]})),
 ("values unsorted", False, _capacity({"default": "1Gi", "validValues": ["2Gi", "1Gi"]})),
 ("values dup", False, _capacity({"default": "1Gi", "validValues": ["1Gi", "1Gi"]})),
 ("values dup units", False, _capacity({"default": "1Gi", "validValues": ["1Gi", "1024Mi"]})),
 ("values over", False, _capacity({"default": "1Gi", "validValues": ["1Gi", "20Gi"]})),
 ("values default missing", False, _capacity({"default": "3Gi", "validValues": ["1Gi", "2Gi"]})),
 ("values 11", False, _capacity({"default": "1", "validValues": [str(i) for i in range(1, 12)]}, value="100")),
 ("values 10", True, _capacity({"default": "1", "validValues": [str(i) for i in range(1, 11)]}, value="100")),
 ("values and range", False, _capacity({"default": "1Gi", "validValues": ["1Gi"], "validRange": {"min": "1Gi"}})),
 ("values milli dup", True, _capacity({"default": "1", "validValues": ["1", "1.5"]}, value="10")),
 ("values fractional", False, _capacity({"default": "500m", "validValues": ["500m", "1"]}, value="10")),
 ("range ok", True, _capacity({"default": "2Gi", **_range(min="1Gi", max="8Gi", step="1Gi")})),
 ("range no default", False, _capacity(_range(min="1Gi"))),
 ("range no min", False, _capacity({"default": "1Gi", **_range(max="8Gi")})),
 ("range min over", False, _capacity({"default": "20Gi", **_range(min="20Gi")})),
 ("range default under", False, _capacity({"default": "1Gi", **_range(min="2Gi")})),
 ("range min over max", False, _capacity({"default": "4Gi", **_range(min="4Gi", max="2Gi")})),
 ("range max over", False, _capacity({"default": "1Gi", **_range(min="1Gi", max="20Gi")})),
 ("range default over max", False, _capacity({"default": "9Gi", **_range(min="1Gi", max="8Gi")})),
 ("range step zero", False, _capacity({"default": "1Gi", **_range(min="1Gi", step="0")})),
 ("range step negative", False, _capacity({"default": "1Gi", **_range(min="1Gi", step="-1Gi")})),
 ("range step too big", False, _capacity({"default": "1Gi", **_range(min="1Gi", step="10Gi")})),
 ("range default off grid", False, _capacity({"default": "1536Mi", **_range(min="1Gi", step="1Gi")})),
 ("range max off grid", False, _capacity({"default": "1Gi", **_range(min="1Gi", max="2560Mi", step="1Gi")})),
 ("range fractional step", True, _capacity({"default": "1", **_range(min="1", step="500m")}, value="10")),
 ("range fractional min", True, _capacity({"default": "1500m", **_range(min="500m", step="1")}, value="10")),
 ("range negative min", False, _capacity({"default": "0", **_range(min="-1", step="1")}, value="10")),
 ("range huge", False, _capacity({"default": "1", **_range(min="1", step="1", max="10E18")}, value="20E18")),
 ("range fractional default int range", True, _capacity({"default": "1500m", **_range(min="1", step="1")}, value="10")),
 ("bc ok", True, _devices([{"name": "d", "bindingConditions": ["ready"], "bindingFailureConditions": ["failed"]}])),
 ("bc only", False, _devices([{"name": "d", "bindingConditions": ["ready"]}])),
 ("bfc only", False, _devices([{"name": "d", "bindingFailureConditions": ["failed"]}])),
 ("bc dup", False, _devices([{"name": "d", "bindingConditions": ["ready", "ready"], "bindingFailureConditions": ["failed"]}])),
 ("bc overlap", False, _devices([{"name": "d", "bindingConditions": ["ready"], "bindingFailureConditions": ["ready"]}])),
 ("bc 5", False, _devices([{"name": "d", "bindingConditions": [f"c{i}" for i in range(5)], "bindingFailureConditions": ["failed"]}])),
 ("bc bad name", False, _devices([{"name": "d", "bindingConditions": ["bad name"], "bindingFailureConditions": ["failed"]}])),
 ("bc empty name", False, _devices([{"name": "d", "bindingConditions": [""], "bindingFailureConditions": ["failed"]}])),
 ("bc qualified", True, _devices([{"name": "d", "bindingConditions": ["example.com/ready"], "bindingFailureConditions": ["example.com/failed"]}])),
 ("bc bindsToNode only", True, _devices([{"name": "d", "bindsToNode": True}])),
]


#: numbers at the edges of what the server decodes (a number past int64 is a 400; a YAML float
#: such as 2.0 is left out: kubectl writes it to JSON as 2)
OBJECTS += [
 ("int max", True, _devices([{"name": "d", "attributes": {"a": {"int": 2**63 - 1}}}])),
 ("int over", False, _devices([{"name": "d", "attributes": {"a": {"int": 2**63}}}])),
 ("int min", True, _devices([{"name": "d", "attributes": {"a": {"int": -2**63}}}])),
 ("int under", False, _devices([{"name": "d", "attributes": {"a": {"int": -2**63 - 1}}}])),
 ("int fraction", False, _devices([{"name": "d", "attributes": {"a": {"int": 1.5}}}])),
 ("ints over", False, _devices([{"name": "d", "attributes": {"a": {"ints": [1, 2**63]}}}])),
 ("capacity huge", True, _devices([{"name": "d", "capacity": {"m": {"value": "9999999999999999999999E99"}}}])),
 ("capacity below a nano", True, _devices([{"name": "d", "capacity": {"m": {"value": "0.1n"}}}])),
 ("string with NUL", True, _devices([{"name": "d", "attributes": {"a": {"string": "a\u0000b"}}}])),
 ("generation over", False, _slice({"pool": {"name": "p", "generation": 2**63, "resourceSliceCount": 1}})),
 ("slice count over", False, _slice({"pool": {"name": "p", "generation": 1, "resourceSliceCount": 2**63}})),
 ("count over", False, _claim({"requests": [_ex(count=2**63)]})),
 ("toleration seconds over", False, _claim({"requests": [_ex(tolerations=[
     {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 2**63}])]})),
]

def _claim_template(metadata=None, name="t"):
    """ResourceClaimTemplate `name` with this spec.metadata (the generated claims' labels and annotations)."""
    spec = {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}
    if metadata is not None:
        spec["metadata"] = metadata
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _named_claim(metadata):
    return {**_claim({"requests": [_ex()]}), "metadata": {"namespace": "default", **metadata}}


#: object metadata and a template's spec.metadata (ValidateObjectMeta, ValidateTemplateObjectMeta)
OBJECTS += [
 ("template", True, _claim_template()),
 ("template labels", True, _claim_template({"labels": {"a": "b"}})),
 ("template label key bad", False, _claim_template({"labels": {"bad key": "b"}})),
 ("template label value bad", False, _claim_template({"labels": {"a": "bad value"}})),
 ("template annotations", True, _claim_template({"annotations": {"a": "any value at all"}})),
 ("template annotation key bad", False, _claim_template({"annotations": {"bad key": "v"}})),
 ("template metadata name", False, _claim_template({"name": "x"})),
 ("template metadata namespace", False, _claim_template({"namespace": "other"})),
 ("template metadata generateName", False, _claim_template({"generateName": "x-"})),
 ("template metadata finalizers", False, _claim_template({"finalizers": ["example.com/f"]})),
 ("template metadata owner", False, _claim_template({"ownerReferences": [
     {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u"}]})),
 ("template creationTimestamp null", True, _claim_template({"creationTimestamp": None, "labels": {"a": "b"}})),
 ("template name long", False, _claim_template(name="t" * 254)),
 ("template name with dots", True, _claim_template(name="a.b")),
 ("claim label key bad", False, _named_claim({"name": "c", "labels": {"a/b/c": "x"}})),
 ("claim generateName", True, _named_claim({"generateName": "c-"})),
 ("claim generateName bad", False, _named_claim({"generateName": "C_"})),
]

def _pod(claims=None, container_claims=None, init_claims=None):
    """Pod p: container c with these resources.claims, init container i with init_claims."""
    container = {"name": "c", "image": "x"}
    if container_claims is not None:
        container["resources"] = {"claims": container_claims}
    spec = {"containers": [container]}
    if init_claims is not None:
        spec["initContainers"] = [{"name": "i", "image": "x", "resources": {"claims": init_claims}}]
    if claims is not None:
        spec["resourceClaims"] = claims
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec}


def _template(name="gpu", template="tmpl"):
    return {"name": name, "resourceClaimTemplateName": template}


GPU = [{"name": "gpu"}]

#: pods' claim fields (pkg/apis/core/validation validatePodResourceClaims), as POD_OBJECTS:
#: (what it tries, whether the server accepts it, the pod); its template is not in the set
POD_OBJECTS = [
 ("ok", True, _pod([_template()], GPU)),
 ("claim name bad", False, _pod([_template("GPU")], [{"name": "GPU"}])),
 ("claim name long", False, _pod([_template("g" * 64)], [{"name": "g" * 64}])),
 ("claim name 63", True, _pod([_template("g" * 63)], [{"name": "g" * 63}])),
 ("claim name empty", False, _pod([_template("")], [])),
 ("dup pod claims", False, _pod([_template(), _template()], GPU)),
 ("both sources", False, _pod([{"name": "gpu", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}], GPU)),
 ("no source", False, _pod([{"name": "gpu"}], GPU)),
 ("claim ref bad", False, _pod([{"name": "gpu", "resourceClaimName": "Bad_Name"}], GPU)),
 ("claim ref long", False, _pod([{"name": "gpu", "resourceClaimName": "c" * 254}], GPU)),
 ("template ref bad", False, _pod([_template("gpu", "Bad_Name")], GPU)),
 ("template ref long", False, _pod([_template("gpu", "t" * 254)], GPU)),
 ("container undefined", False, _pod([_template()], [{"name": "other"}])),
 ("container unnamed", False, _pod([_template()], [{"name": ""}])),
 ("no pod claims", False, _pod(None, GPU)),
 ("container twice", False, _pod([_template()], GPU + GPU)),
 ("container request twice", False, _pod([_template()], [{"name": "gpu", "request": "a"}] * 2)),
 ("container two requests", True, _pod([_template()], [{"name": "gpu", "request": "a"}, {"name": "gpu", "request": "b"}])),
 ("container whole then request", False, _pod([_template()], GPU + [{"name": "gpu", "request": "a"}])),
 ("container request then whole", False, _pod([_template()], [{"name": "gpu", "request": "a"}] + GPU)),
 ("container request bad", False, _pod([_template()], [{"name": "gpu", "request": "A_1"}])),
 ("container subrequest", False, _pod([_template()], [{"name": "gpu", "request": "a/b"}])),
 ("init container", True, _pod([_template()], [], GPU)),
 ("init undefined", False, _pod([_template()], [], [{"name": "x"}])),
 ("unused pod claim", True, _pod([_template()], [])),
 ("pod-level resources with claims", False,
  {**_pod([_template()], []), "spec": {"resourceClaims": [_template()], "resources": {"claims": GPU},
                                       "containers": [{"name": "c", "image": "x"}]}}),
 ("pod-level resources", True,
  {**_pod([_template()], GPU), "spec": {"resourceClaims": [_template()], "resources": {"limits": {"cpu": "1"}},
                                        "containers": [{"name": "c", "image": "x", "resources": {"claims": GPU}}]}}),
 ("33 claims", True, _pod([_template(f"g{i}") for i in range(33)], [{"name": f"g{i}"} for i in range(33)])),
]
