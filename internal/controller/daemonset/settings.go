/*
Copyright 2026 The enhanced-liveness-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package daemonset

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemonoptions"
)

// ManagedDaemonFlags are the daemon flags Build writes itself, each with what decides it instead:
// passing one through would fight the DaemonSet's ports, probes, mounts or downward API.
var ManagedDaemonFlags = map[string]string{
	"metrics-bind-address":      "the manager flag --daemon-metrics-port",
	"health-probe-bind-address": "the manager flag --daemon-health-port",
	"cri-endpoint":              "the manager flag --daemon-cri-endpoint (which also mounts the socket's directory)",
	"node-name":                 "the pod's node (NODE_NAME from the downward API)",
	"namespace":                 "the pod's namespace (POD_NAMESPACE from the downward API)",
	"kubeconfig":                "the daemon's in-cluster ServiceAccount",
}

// ValidateExtraArgs checks daemon arguments passed through the manager against the daemon's own
// flag set (internal/daemonoptions): each one a single flag, --name=value (or --name for a
// boolean), known to the daemon, not one the DaemonSet sets itself, given once, with a value the
// daemon accepts.
func ValidateExtraArgs(args []string) error {
	seen := map[string]bool{}
	known := daemonoptions.Names()
	for _, a := range args {
		name, ok := flagName(a)
		if !ok {
			return fmt.Errorf("daemon argument %q: want one flag, --name=value", a)
		}
		if why, managed := ManagedDaemonFlags[name]; managed {
			return fmt.Errorf("daemon argument %q: --%s is set by the manager from %s", a, name, why)
		}
		if !slices.Contains(known, name) {
			return fmt.Errorf("daemon argument %q: the daemon has no flag --%s (it has %s)", a, name, settable(known))
		}
		if seen[name] {
			return fmt.Errorf("daemon argument %q: --%s is given twice", a, name)
		}
		seen[name] = true
		if _, err := daemonoptions.Parse([]string{a}); err != nil {
			return fmt.Errorf("daemon argument %q: %w", a, err)
		}
	}
	// Settings checked together (the two write windows depend on each other).
	o, err := daemonoptions.Parse(args)
	if err == nil {
		err = o.Validate()
	}
	if err != nil {
		return fmt.Errorf("daemon arguments %q: %w", args, err)
	}
	return nil
}

// flagName returns NAME of "--NAME=value", "--NAME", "-NAME=value" or "-NAME".
func flagName(arg string) (string, bool) {
	rest, ok := strings.CutPrefix(arg, "-")
	if !ok {
		return "", false
	}
	rest = strings.TrimPrefix(rest, "-")
	name, _, _ := strings.Cut(rest, "=")
	if name == "" || strings.HasPrefix(name, "-") {
		return "", false
	}
	return name, true
}

// settable lists the daemon flags that may be passed through, for error messages.
func settable(known []string) string {
	var out []string
	for _, n := range known {
		if _, managed := ManagedDaemonFlags[n]; !managed {
			out = append(out, "--"+n)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// ValidateResources refuses requests above their limits, negative requests and limits that are
// not positive. The API server would refuse such a DaemonSet too, but only when the controller
// applies it; checked here, the manager refuses the flag at start, naming it.
func ValidateResources(r corev1.ResourceRequirements) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		req := r.Requests[name]
		if req.Sign() < 0 {
			errs = append(errs, fmt.Errorf("daemon %s request %s is negative", name, req.String()))
		}
		if lim, ok := r.Limits[name]; ok && req.Cmp(lim) > 0 {
			errs = append(errs, fmt.Errorf("daemon %s request %s is above its limit %s", name, req.String(), lim.String()))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Limits)) {
		if q := r.Limits[name]; q.Sign() <= 0 {
			errs = append(errs, fmt.Errorf("daemon %s limit %s is not positive", name, q.String()))
		}
	}
	return errors.Join(errs...)
}
