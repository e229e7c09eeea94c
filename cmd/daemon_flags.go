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

package main

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/daemonset"
)

// daemonFlags are the manager flags that decide the node daemon's own settings: its command line
// (passed through, checked against the daemon's flag set), its resources and its host ports. The
// manager writes the DaemonSet and puts back any edit of it, so these flags are the one place to
// change them (docs/daemon.md, "Settings").
type daemonFlags struct {
	args        stringList
	requests    string
	limits      string
	metricsPort int
	healthPort  int
}

func bindDaemonFlags(fs *flag.FlagSet) *daemonFlags {
	f := &daemonFlags{}
	def := daemonset.DefaultResources()
	fs.Var(&f.args, "daemon-arg",
		"A flag passed to every node daemon, e.g. --daemon-arg=--memory-limit=128Mi; repeat it for more. "+
			"Checked against the daemon's own flags at start; the flags the DaemonSet sets itself "+
			"(ports, CRI endpoint, node, namespace) are refused.")
	fs.StringVar(&f.requests, "daemon-requests", formatResources(def.Requests),
		"Resource requests of the daemon container, name=quantity[,name=quantity] "+
			"(cpu, memory, ephemeral-storage); empty for none.")
	fs.StringVar(&f.limits, "daemon-limits", formatResources(def.Limits),
		"Resource limits of the daemon container, name=quantity[,name=quantity]; a resource left out has no limit. "+
			"The daemon's --memory-limit=auto (its default) sets its soft memory limit to 3/4 of the memory limit.")
	fs.IntVar(&f.metricsPort, "daemon-metrics-port", daemonset.DefaultMetricsPort,
		"Host port of the daemons' metrics endpoint (they run in the host network).")
	fs.IntVar(&f.healthPort, "daemon-health-port", daemonset.DefaultHealthPort,
		"Host port of the daemons' /healthz and /readyz endpoints.")
	return f
}

// applyTo sets the daemon's command line, resources and ports on c and checks each, naming the
// manager flag that is wrong.
func (f *daemonFlags) applyTo(c *daemonset.Config) error {
	req, err := parseResources(f.requests)
	if err != nil {
		return fmt.Errorf("--daemon-requests: %w", err)
	}
	lim, err := parseResources(f.limits)
	if err != nil {
		return fmt.Errorf("--daemon-limits: %w", err)
	}
	c.Resources = corev1.ResourceRequirements{Requests: req, Limits: lim}
	if err := daemonset.ValidateResources(c.Resources); err != nil {
		return fmt.Errorf("--daemon-requests, --daemon-limits: %w", err)
	}
	for _, p := range []struct {
		flag string
		v    int
		dst  *int32
	}{{"--daemon-metrics-port", f.metricsPort, &c.MetricsPort}, {"--daemon-health-port", f.healthPort, &c.HealthPort}} {
		if p.v < 1 || p.v > 65535 {
			return fmt.Errorf("%s: %d is not a port (1-65535)", p.flag, p.v)
		}
		*p.dst = int32(p.v)
	}
	if c.MetricsPort == c.HealthPort {
		return fmt.Errorf("--daemon-metrics-port and --daemon-health-port: both are %d", c.MetricsPort)
	}
	c.ExtraArgs = slices.Clone(f.args)
	if err := daemonset.ValidateExtraArgs(c.ExtraArgs); err != nil {
		return fmt.Errorf("--daemon-arg: %w", err)
	}
	return nil
}

// daemonResources are the resources the daemon's requests and limits may name.
var daemonResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage}

// parseResources reads "cpu=20m,memory=64Mi" (kubectl set resources' form); "" is none.
func parseResources(s string) (corev1.ResourceList, error) {
	list := corev1.ResourceList{}
	if strings.TrimSpace(s) == "" {
		return list, nil
	}
	for item := range strings.SplitSeq(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return nil, fmt.Errorf("%q: want name=quantity, e.g. memory=256Mi", item)
		}
		rn := corev1.ResourceName(name)
		if !slices.Contains(daemonResources, rn) {
			return nil, fmt.Errorf("%q: unknown resource %q (want cpu, memory or ephemeral-storage)", item, name)
		}
		if _, dup := list[rn]; dup {
			return nil, fmt.Errorf("%q: %s is given twice", s, name)
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", item, err)
		}
		list[rn] = q
	}
	return list, nil
}

func formatResources(l corev1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, n := range slices.Sorted(maps.Keys(l)) {
		q := l[n]
		parts = append(parts, string(n)+"="+q.String())
	}
	return strings.Join(parts, ",")
}

// stringList is a repeatable string flag. From the environment (env_flags.go) it takes a
// whitespace-separated list.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, " ") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}
