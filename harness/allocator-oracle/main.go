// Command allocator-oracle runs the upstream structured allocator
// (k8s.io/dynamic-resource-allocation/structured) on scenarios read as JSON lines from stdin
// and prints one JSON line per scenario: the allocation results, "unschedulable", or the error.
// It is a test harness for draguard's own allocator, not part of the product.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	resourcedefaults "k8s.io/kubernetes/pkg/apis/resource/v1"
)

// stored applies the API server's defaulting of resource.k8s.io/v1 objects (its
// RegisterDefaults, the one kube-apiserver runs) to a scenario's claims.
var stored = func() *runtime.Scheme {
	scheme := runtime.NewScheme()
	if err := resourcedefaults.RegisterDefaults(scheme); err != nil {
		panic(err)
	}
	return scheme
}()

type deviceID struct {
	Driver string `json:"driver"`
	Pool   string `json:"pool"`
	Device string `json:"device"`
}

// sharedDevice is a result with a shareID of an allocated claim: the scheduler records it in
// AllocatedSharedDeviceIDs and its consumed capacity in AggregatedCapacity (allocateddevices.go).
type sharedDevice struct {
	deviceID
	ShareID          types.UID                                       `json:"shareID"`
	ConsumedCapacity map[resourceapi.QualifiedName]resource.Quantity `json:"consumedCapacity"`
}

type scenario struct {
	ID               string                       `json:"id"`
	DeviceClasses    []*resourceapi.DeviceClass   `json:"deviceClasses"`
	ResourceSlices   []*resourceapi.ResourceSlice `json:"resourceSlices"`
	Claims           []*resourceapi.ResourceClaim `json:"claims"`
	AllocatedDevices []deviceID                   `json:"allocatedDevices"`
	AllocatedShared  []sharedDevice               `json:"allocatedShared"`
	Node             *v1.Node                     `json:"node"`
	// Nodes, when set, makes this a timing run: Allocate once per node, as the scheduler's
	// Filter does, and report how many nodes fit and the total time.
	Nodes    []*v1.Node          `json:"nodes"`
	Features structured.Features `json:"features"`
	// CEL, when set, makes this a selector run: each expression compiled by upstream's DRA
	// CEL compiler and evaluated on each device, with no allocation.
	CEL *celScenario `json:"cel"`
}

type celScenario struct {
	Expressions []string     `json:"expressions"`
	Devices     []celDevice  `json:"devices"`
	Features    cel.Features `json:"features"`
	// NewExpressions compiles as the API server does for new objects (feature-gated device
	// fields only when their gate is on) instead of as the scheduler does (stored expressions).
	NewExpressions bool `json:"newExpressions"`
	// Derived compiles and evaluates derived attributes (DRADerivedAttributes) as the
	// experimental allocator does: each device's result is the attribute's value.
	Derived bool `json:"derived"`
}

type celDevice struct {
	Driver string             `json:"driver"`
	Device resourceapi.Device `json:"device"`
}

type celVerdict struct {
	CompileError string `json:"compileError,omitempty"`
	// MaxCost is the compile-time cost estimate (what the apiserver compares with its limit).
	MaxCost uint64       `json:"maxCost"`
	Results []celOutcome `json:"results,omitempty"`
}

type celOutcome struct {
	Match bool          `json:"match"`
	Error string        `json:"error,omitempty"`
	Value *derivedValue `json:"value,omitempty"` // derived attributes: the value made
}

// derivedValue is a DeviceAttribute with its kind spelled out (an empty list would vanish
// under the API type's omitempty).
type derivedValue struct {
	Kind  string `json:"kind"`
	Value any    `json:"value"`
}

func derivedJSON(a *resourceapi.DeviceAttribute) *derivedValue {
	switch {
	case a.IntValue != nil:
		return &derivedValue{"int", *a.IntValue}
	case a.BoolValue != nil:
		return &derivedValue{"bool", *a.BoolValue}
	case a.StringValue != nil:
		return &derivedValue{"string", *a.StringValue}
	case a.VersionValue != nil:
		return &derivedValue{"version", *a.VersionValue}
	case a.IntValues != nil:
		return &derivedValue{"ints", a.IntValues}
	case a.BoolValues != nil:
		return &derivedValue{"bools", a.BoolValues}
	case a.StringValues != nil:
		return &derivedValue{"strings", a.StringValues}
	case a.VersionValues != nil:
		return &derivedValue{"versions", a.VersionValues}
	}
	return &derivedValue{"none", nil}
}

type outcome struct {
	ID      string                         `json:"id"`
	Outcome string                         `json:"outcome"` // allocated, unschedulable, error
	Results []resourceapi.AllocationResult `json:"results,omitempty"`
	Error   string                         `json:"error,omitempty"`
	Fitting int                            `json:"fitting,omitempty"` // timing runs: nodes where the claims fit
	CEL     []celVerdict                   `json:"cel,omitempty"`     // selector runs: one per expression
	Nanos   int64                          `json:"nanos"`
}

type classLister map[string]*resourceapi.DeviceClass

func (l classLister) List() ([]*resourceapi.DeviceClass, error) {
	out := make([]*resourceapi.DeviceClass, 0, len(l))
	for _, c := range l {
		out = append(out, c)
	}
	return out, nil
}

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	if c, ok := l[name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclasses"), name)
}

// evaluate compiles and evaluates selectors as the scheduler does (stored-expressions
// environment, the DRA cost limit), reporting compile errors, cost estimates and per-device
// results or runtime errors.
func evaluate(ctx context.Context, s *scenario) outcome {
	start := time.Now()
	compiler := cel.GetCompiler(s.CEL.Features)
	verdicts := make([]celVerdict, 0, len(s.CEL.Expressions))
	for _, expression := range s.CEL.Expressions {
		options := cel.Options{DerivedAttribute: s.CEL.Derived}
		if s.CEL.NewExpressions {
			envType := environment.NewExpressions
			options.EnvType = &envType
		}
		compiled := compiler.CompileCELExpression(expression, options)
		verdict := celVerdict{MaxCost: compiled.MaxCost}
		if compiled.Error != nil {
			verdict.CompileError = compiled.Error.Error()
			verdicts = append(verdicts, verdict)
			continue
		}
		for _, d := range s.CEL.Devices {
			device := cel.Device{Driver: d.Driver, AllowMultipleAllocations: d.Device.AllowMultipleAllocations,
				Attributes: d.Device.Attributes, Capacity: d.Device.Capacity}
			var result celOutcome
			if s.CEL.Derived {
				value, _, err := compiled.EvaluateDerivedAttribute(ctx, device)
				if err != nil {
					result = celOutcome{Error: err.Error()}
				} else {
					result = celOutcome{Value: derivedJSON(value)}
				}
			} else {
				match, _, err := compiled.DeviceMatches(ctx, device)
				result = celOutcome{Match: match}
				if err != nil {
					result = celOutcome{Error: err.Error()}
				}
			}
			verdict.Results = append(verdict.Results, result)
		}
		verdicts = append(verdicts, verdict)
	}
	return outcome{ID: s.ID, Outcome: "cel", CEL: verdicts, Nanos: time.Since(start).Nanoseconds()}
}

func run(ctx context.Context, cache *cel.Cache, s *scenario) outcome {
	if s.CEL != nil {
		return evaluate(ctx, s)
	}
	for _, claim := range s.Claims {
		// as the API server stores it: upstream's defaulting (a count of 0 or none is 1, a
		// missing allocationMode ExactCount, a toleration's operator Equal), the claims the
		// scheduler's allocator is given (k8s.io/kubernetes pkg/apis/resource/v1 defaults.go)
		stored.Default(claim)
	}
	classes := classLister{}
	for _, c := range s.DeviceClasses {
		classes[c.Name] = c
	}
	allocated := sets.New[structured.DeviceID]()
	for _, d := range s.AllocatedDevices {
		allocated.Insert(structured.MakeDeviceID(d.Driver, d.Pool, d.Device))
	}
	shared := sets.New[structured.SharedDeviceID]()
	aggregated := structured.NewConsumedCapacityCollection()
	for _, d := range s.AllocatedShared {
		id := structured.MakeDeviceID(d.Driver, d.Pool, d.Device)
		shareID := d.ShareID
		shared.Insert(structured.MakeSharedDeviceID(id, &shareID))
		if d.ConsumedCapacity != nil {
			aggregated.Insert(structured.NewDeviceConsumedCapacity(id, d.ConsumedCapacity))
		}
	}
	start := time.Now()
	allocator, err := structured.NewAllocator(ctx, s.Features, structured.AllocatedState{AllocatedDevices: allocated,
		AllocatedSharedDeviceIDs: shared, AggregatedCapacity: aggregated}, classes, s.ResourceSlices, cache)
	if err != nil {
		return outcome{ID: s.ID, Outcome: "error", Error: err.Error(), Nanos: time.Since(start).Nanoseconds()}
	}
	if len(s.Nodes) > 0 {
		fitting := 0
		for _, node := range s.Nodes {
			results, err := allocator.Allocate(ctx, node, s.Claims)
			if err != nil {
				return outcome{ID: s.ID, Outcome: "error", Error: err.Error(), Nanos: time.Since(start).Nanoseconds()}
			}
			if results != nil {
				fitting++
			}
		}
		return outcome{ID: s.ID, Outcome: "timing", Fitting: fitting, Nanos: time.Since(start).Nanoseconds()}
	}
	results, err := allocator.Allocate(ctx, s.Node, s.Claims)
	elapsed := time.Since(start).Nanoseconds()
	switch {
	case err != nil:
		return outcome{ID: s.ID, Outcome: "error", Error: err.Error(), Nanos: elapsed}
	case results == nil:
		return outcome{ID: s.ID, Outcome: "unschedulable", Nanos: elapsed}
	default:
		return outcome{ID: s.ID, Outcome: "allocated", Results: results, Nanos: elapsed}
	}
}

func main() {
	ctx := context.Background()
	cache := cel.NewCache(10000, cel.Features{})
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<20), 1<<30)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	encoder := json.NewEncoder(out)
	for in.Scan() {
		var s scenario
		if err := json.Unmarshal(in.Bytes(), &s); err != nil {
			fmt.Fprintf(os.Stderr, "allocator-oracle: bad scenario: %v\n", err)
			os.Exit(2)
		}
		if err := encoder.Encode(run(ctx, cache, &s)); err != nil {
			fmt.Fprintf(os.Stderr, "allocator-oracle: %v\n", err)
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "allocator-oracle: reading stdin: %v\n", err)
		os.Exit(2)
	}
}
