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

// Package wiring assembles the node daemon on its controller-runtime manager: the node-scoped
// cache (CacheOptions), the probe engine (Setup: the probe workers of internal/daemon/prober,
// the results they share with the NodePodProbeReport writer of internal/daemon/report, and the
// Lease heartbeat) and the controller that keeps the workers and the writer in step with the
// node's NodePodProbe spec and pods (SpecReconciler). cmd/daemon adds the CRR executor
// (internal/daemon/recreate) beside it.
package wiring

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/heartbeat"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/report"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/gate"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// CacheOptions restrict the daemon's informers to its own node: its NodePodProbe and report, the pods bound
// to it, the ContainerRecreateRequests labelled with it, Leases of the operator namespace and the
// trust ConfigMap there. Watching every pod of the cluster from every node would multiply
// apiserver load by the node count. Pods are cached whole: the probe-context annotations and the
// seal are what the daemon verifies every probe against (internal/trust/gate).
func CacheOptions(nodeName, namespace string) cache.Options {
	return cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&appsv1alpha1.NodePodProbe{}:       {Field: fields.OneTermEqualSelector("metadata.name", nodeName)},
			&appsv1alpha1.NodePodProbeReport{}: {Field: fields.OneTermEqualSelector("metadata.name", nodeName)},
			&corev1.Pod{}:                      {Field: fields.OneTermEqualSelector("spec.nodeName", nodeName)},
			&appsv1alpha1.ContainerRecreateRequest{}: {
				Label: labels.SelectorFromSet(labels.Set{appsv1alpha1.LabelCRRNodeName: nodeName}),
			},
			&coordinationv1.Lease{}: {Namespaces: map[string]cache.Config{namespace: {}}},
			&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{namespace: {}},
				Field: fields.OneTermEqualSelector("metadata.name", signature.TrustConfigMapName)},
		},
	}
}

// Options configure the probe engine of one node.
type Options struct {
	NodeName, Namespace string
	// Runtime runs exec probes, once it says the container is the pod's.
	Runtime cri.ExecRuntime
	// Addresses gives the pod address that HTTP, TCP and gRPC probes naming no host dial.
	Addresses *cri.Addresses
	// UserAgent of HTTP and gRPC probes (prober.UserAgent).
	UserAgent string
	// Recorder emits the probe events; nil emits none.
	Recorder events.EventRecorder
	// WriteWindow gathers status changes (report.DefaultWriteWindow when zero).
	WriteWindow time.Duration
	// FailureWriteWindow replaces WriteWindow for a write that reports a new liveness failure
	// (report.DefaultFailureWindow when zero).
	FailureWriteWindow time.Duration
	// ReportBudget is the most bytes the report's status may take, JSON-encoded
	// (report.DefaultReportBudget when zero).
	ReportBudget int
	// LeaseInterval between heartbeats (DaemonLeaseRenewSeconds when zero).
	LeaseInterval time.Duration
}

// Engine is what Setup added to the manager.
type Engine struct {
	Probes    *prober.Manager
	Status    *report.Writer
	Heartbeat *heartbeat.Heartbeat
}

// Setup adds the probe workers, the report writer, the heartbeat and the node controller to mgr,
// whose cache must be built with CacheOptions.
func Setup(mgr ctrl.Manager, o Options) (*Engine, error) {
	probes := prober.NewManager(o.Runtime, o.UserAgent, &prober.Events{Recorder: o.Recorder})
	probes.Addresses = o.Addresses
	e := &Engine{
		Probes: probes,
		Status: &report.Writer{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), NodeName: o.NodeName,
			Results: probes.Results, Window: o.WriteWindow, FailureWindow: o.FailureWriteWindow,
			Budget: o.ReportBudget, Recorder: o.Recorder, Failures: report.NewFailureTimes(clock.RealClock{}),
		},
		Heartbeat: &heartbeat.Heartbeat{Client: mgr.GetClient(), NodeName: o.NodeName, Namespace: o.Namespace, Interval: o.LeaseInterval},
	}
	for _, r := range []manager.Runnable{e.Probes, e.Status, e.Heartbeat} {
		if err := mgr.Add(r); err != nil {
			return nil, err
		}
	}
	r := &SpecReconciler{Client: mgr.GetClient(), NodeName: o.NodeName, Namespace: o.Namespace, Probes: e.Probes, Status: e.Status,
		Trust: &gate.Gate{Recorder: o.Recorder}}
	if err := r.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	return e, nil
}
