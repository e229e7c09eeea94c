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

package daemonoptions

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/report"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
)

// The defaults are repeated here so that the manager does not link the prober (whose metrics
// register at init); they must stay what the status writer uses when given nothing.
func TestDefaultsMatchTheProber(t *testing.T) {
	if DefaultStatusWriteWindow != report.DefaultWriteWindow {
		t.Errorf("DefaultStatusWriteWindow = %s, report.DefaultWriteWindow = %s", DefaultStatusWriteWindow, report.DefaultWriteWindow)
	}
	if DefaultFailureWriteWindow != report.DefaultFailureWindow {
		t.Errorf("DefaultFailureWriteWindow = %s, report.DefaultFailureWindow = %s", DefaultFailureWriteWindow, report.DefaultFailureWindow)
	}
	if DefaultReportBudget != report.DefaultReportBudget {
		t.Errorf("DefaultReportBudget = %d, report.DefaultReportBudget = %d", DefaultReportBudget, report.DefaultReportBudget)
	}
}

// The least budget holds the largest entry one pod can have (MaxProbesPerPod failing probes, the
// longest names, messages as long as the daemon writes them, every time set) beside the status's
// own fields at their largest, so no budget the flag accepts leaves a namespace out for one pod.
func TestMinReportBudgetHoldsThePodWithTheLargestEntry(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 6, 23, 59, 59, 0, time.UTC))
	name := strings.Repeat("p", appsv1alpha1.MaxPodNameLength)
	ps := appsv1alpha1.PodProbeStatus{Name: name, Namespace: strings.Repeat("n", appsv1alpha1.MaxNamespaceLength),
		UID: types.UID("6f1c9a52-2b7e-4c0e-9d55-000000000000")}
	for c := range appsv1alpha1.MaxProbesPerPod {
		ps.ProbeStates = append(ps.ProbeStates, appsv1alpha1.ContainerProbeState{
			Name:        fmt.Sprintf("%s-%0*d", name, appsv1alpha1.MaxContainerNameLength, c),
			ContainerID: "containerd://" + strings.Repeat("f", 64), State: appsv1alpha1.ProbeFailed,
			Message: strings.Repeat("m", results.MaxMessageBytes), LastProbeTime: at, LastTransitionTime: at, FailingSince: &at,
		})
	}
	st := appsv1alpha1.ProbeResults{ObservedGeneration: math.MaxInt64, ProbedGeneration: math.MaxInt64,
		ProbedPods: math.MaxInt32, FailingProbes: math.MaxInt32, PodProbeStatuses: []appsv1alpha1.PodProbeStatus{ps}}
	data, err := json.Marshal(&st)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > MinReportBudget {
		t.Errorf("one pod's largest entry takes %d bytes, more than MinReportBudget (%d)", len(data), MinReportBudget)
	}
	t.Logf("one pod's largest entry: %d bytes of %d", len(data), MinReportBudget)
}

func TestParse(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantErr string // substring; empty: no error
		check   func(*Options) bool
	}{
		{name: "defaults", check: func(o *Options) bool {
			return o.MemoryLimit == "auto" && o.WriteWindow == DefaultStatusWriteWindow && o.CRITimeout == 10*time.Second &&
				o.ReportBudget == DefaultReportBudget
		}},
		{name: "memory limit", args: []string{"--memory-limit=128Mi"}, check: func(o *Options) bool { return o.MemoryLimit == "128Mi" }},
		{name: "logging flag", args: []string{"--zap-log-level=debug"}},
		{name: "two values", args: []string{"--cri-timeout", "5s", "--kubelet-version=v1.33.1"}, check: func(o *Options) bool {
			return o.CRITimeout == 5*time.Second && o.KubeletVersion == "v1.33.1"
		}},
		{name: "unknown flag", args: []string{"--memory-limits=1Gi"}, wantErr: "flag provided but not defined: -memory-limits"},
		{name: "bad duration", args: []string{"--cri-timeout=soon"}, wantErr: `invalid value "soon" for flag -cri-timeout`},
		{name: "bad quantity", args: []string{"--memory-limit=lots"}, wantErr: `--memory-limit "lots"`},
		{name: "negative quantity", args: []string{"--memory-limit=-1Mi"}, wantErr: "must not be negative"},
		{name: "failure window longer than the window", args: []string{"--failure-write-window=1s"}, wantErr: "--failure-write-window (1s)"},
		{name: "zero timeout", args: []string{"--cri-timeout=0s"}, wantErr: "--cri-timeout (0s) must be positive"},
		{name: "report budget", args: []string{"--report-budget-bytes=262144"}, check: func(o *Options) bool { return o.ReportBudget == 256<<10 }},
		{name: "report budget at its least", args: []string{"--report-budget-bytes=65536"}, check: func(o *Options) bool { return o.ReportBudget == MinReportBudget }},
		{name: "report budget at its most", args: []string{"--report-budget-bytes=1310720"}, check: func(o *Options) bool { return o.ReportBudget == MaxReportBudget }},
		{name: "report budget too small", args: []string{"--report-budget-bytes=65535"}, wantErr: "--report-budget-bytes (65535) must be at least 65536"},
		{name: "report budget zero", args: []string{"--report-budget-bytes=0"}, wantErr: "--report-budget-bytes (0) must be at least 65536"},
		{name: "report budget negative", args: []string{"--report-budget-bytes=-1"}, wantErr: "--report-budget-bytes (-1) must be at least"},
		{name: "report budget too large", args: []string{"--report-budget-bytes=1310721"}, wantErr: "and at most 1310720 (1.25 MiB"},
		{name: "report budget not a number", args: []string{"--report-budget-bytes=1Mi"}, wantErr: `invalid value "1Mi" for flag -report-budget-bytes`},
		{name: "positional argument", args: []string{"memory"}, wantErr: `unexpected argument "memory"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Parse(tc.args)
			if err == nil {
				err = o.Validate()
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want one containing %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.args, err)
			}
			if tc.check != nil && !tc.check(o) {
				t.Errorf("Parse(%q) = %+v", tc.args, *o)
			}
		})
	}
}

func TestNames(t *testing.T) {
	names := Names()
	for _, want := range []string{"memory-limit", "cri-endpoint", "status-write-window", "report-budget-bytes", "zap-log-level", "enable-http2"} {
		if !slices.Contains(names, want) {
			t.Errorf("Names() = %v, missing %q", names, want)
		}
	}
}

// The daemon logs for production unless told otherwise: JSON lines at info level.
func TestDaemonLogsJSONAtInfoByDefault(t *testing.T) {
	o := Bind(flag.NewFlagSet("daemon", flag.ContinueOnError))
	var out bytes.Buffer
	log := zap.New(zap.UseFlagOptions(&o.Zap), zap.WriteTo(&out))
	log.Info("an info line")
	log.V(1).Info("a debug line")
	if line, _, _ := strings.Cut(out.String(), "\n"); !json.Valid([]byte(line)) {
		t.Errorf("first line %q is not JSON", line)
	}
	if strings.Contains(out.String(), "a debug line") {
		t.Errorf("a debug line is logged by default: %q", out.String())
	}
}
