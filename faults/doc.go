// Package faults is the harness's fault vocabulary: what a fault is
// (Fault: wait for the moment, break something, record the window, heal),
// the kinds registered once each (Kind: its name, what it needs, its own
// parameters, and its dangerous moment as data; a Spec names a kind and
// holds its parameters, as a YAML faults: entry decodes them), the seeded
// Schedule that fires them, and the judging of each recorded window
// against its kind's dangerous moment (Judge).
//
// One file per kind holds all of it: the type, its parameters (their
// struct, validation, scaling and Build), Danger and the registration.
// Faults act on the deployment (package deployment), its links
// (netfault) and the pods (Pods); they own none of them.
package faults

import "errors"

// Sentinel errors. Callers test them with errors.Is; the wrapping error says
// which fault and why.
var (
	// ErrInvalidConfig means a Spec or a Kind failed validation.
	ErrInvalidConfig = errors.New("faults: invalid config")
	// ErrUnknownFault means a fault kind is not registered.
	ErrUnknownFault = errors.New("faults: unknown fault")
)
