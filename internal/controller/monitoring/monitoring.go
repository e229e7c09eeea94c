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

// Package monitoring keeps the operator's PrometheusRule (every alert, embedded from rules.yaml)
// and the ServiceMonitor of the manager's metrics in the operator namespace, whenever the
// cluster serves the Prometheus Operator's API. The manager owns them on every install path:
// an OLM bundle that carried them would fail to install on a cluster without that API, and the
// API may be installed after the operator.
package monitoring

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/ssa"
)

// DefaultInterval is how often the manager looks again whether the API is served, and puts the
// objects back in shape even if no change was seen.
const DefaultInterval = 5 * time.Minute

// Updates by name only: the names of rules.yaml and servicemonitor.yaml (TestNamesMatchRBAC).
// +kubebuilder:rbac:groups=monitoring.coreos.com,namespace=enhanced-liveness-system,resources=prometheusrules;servicemonitors,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=monitoring.coreos.com,namespace=enhanced-liveness-system,resources=prometheusrules;servicemonitors,verbs=update,resourceNames=enhanced-liveness-operator-alerts;enhanced-liveness-operator-controller-manager-metrics-monitor

// Keeper creates and keeps the monitoring objects. It is a leader-only runnable rather than a
// controller: a controller's watch on a kind the cluster does not serve fails the manager, and
// this API may be absent, or arrive or go at any time.
type Keeper struct {
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
	// Reader reads the owner Deployment (uncached).
	Reader client.Reader
	// Namespace is the operator namespace, where the objects live.
	Namespace string
	// OwnerDeployment is the manager's Deployment in Namespace; when it exists it owns the
	// objects. Empty for none.
	OwnerDeployment string
	// Interval is how often discovery is asked again (DefaultInterval when zero).
	Interval time.Duration

	log     logr.Logger
	served  []schema.GroupVersionResource
	known   bool // served has been learnt at least once
	watch   *watcher
	changed chan struct{}
	// syncs counts finished syncs (the specs wait for the first one); watching tells whether the
	// informers run (the specs check they stop when the API goes).
	syncs    atomic.Int64
	watching atomic.Bool
}

// New builds a Keeper from the manager's REST config.
func New(cfg *rest.Config, reader client.Reader, namespace, ownerDeployment string) (*Keeper, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("monitoring: dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("monitoring: discovery client: %w", err)
	}
	return &Keeper{Dynamic: dyn, Discovery: disc, Reader: reader, Namespace: namespace,
		OwnerDeployment: ownerDeployment}, nil
}

// NeedLeaderElection: only the leader writes the objects.
func (k *Keeper) NeedLeaderElection() bool { return true }

// Start keeps the objects until ctx ends. It never returns an error: monitoring is optional
// and must not stop the manager; failures are logged and tried again.
func (k *Keeper) Start(ctx context.Context) error {
	k.log = ctrl.Log.WithName("monitoring")
	k.changed = make(chan struct{}, 1)
	interval := k.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	defer func() { k.watch.stop() }()
	// A failed sync (API server unavailable, the API going away under a watch, a denied write)
	// is tried again sooner than the interval: after 1 s, doubling up to the interval.
	var retry <-chan time.Time
	backoff := time.Second
	for {
		if k.sync(ctx) {
			retry, backoff = nil, time.Second
		} else {
			retry = time.After(min(backoff, interval))
			backoff *= 2
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-k.changed:
		case <-retry:
		}
	}
}

// sync learns which kinds are served, follows them and puts each served one in shape. It
// returns false when something failed and must be tried again.
func (k *Keeper) sync(ctx context.Context) bool {
	defer k.syncs.Add(1)
	served, err := Served(k.Discovery)
	if err != nil {
		k.log.Error(err, "cannot tell whether the Prometheus Operator API is served; trying again later")
		return false
	}
	if !k.known || !slices.Equal(served, k.served) {
		// Logged once per change, not at every look.
		if len(served) == 0 {
			k.log.Info("the Prometheus Operator API is not served: no PrometheusRule or ServiceMonitor is created",
				"groupVersion", GroupVersion, "recheck", k.interval())
		} else {
			k.log.Info("keeping the operator's monitoring objects", "namespace", k.Namespace, "resources", served)
		}
		k.known, k.served = true, served
		k.watch.stop()
		k.watch = nil
		if len(served) > 0 {
			if k.watch, err = startWatch(k.Dynamic, k.Namespace, served, Names(), k.changed); err != nil {
				// Kept at each interval meanwhile; the next sync tries to watch again.
				k.log.Error(err, "watching the monitoring objects")
				k.known = false
				return false
			}
		}
		k.watching.Store(k.watch != nil)
	}
	if len(served) == 0 {
		return true
	}
	owner, err := k.owner(ctx)
	if err != nil {
		k.log.Error(err, "reading the manager Deployment")
		return false
	}
	objs, err := Desired(k.Namespace, owner)
	if err != nil {
		k.log.Error(err, "building the monitoring objects")
		return false
	}
	ok := true
	for _, o := range objs {
		if !slices.Contains(served, o.Resource) {
			continue
		}
		if err := keep(ctx, k.Dynamic.Resource(o.Resource).Namespace(k.Namespace), o.Desired); err != nil {
			k.log.Error(err, "keeping a monitoring object", "kind", o.Desired.GetKind(), "name", o.Desired.GetName())
			ok = false
		}
	}
	return ok
}

func (k *Keeper) interval() time.Duration {
	if k.Interval <= 0 {
		return DefaultInterval
	}
	return k.Interval
}

// owner returns the reference that makes the manager's Deployment the objects' owner, or nil
// without one.
func (k *Keeper) owner(ctx context.Context) (*metav1.OwnerReference, error) {
	d, err := ssa.ManagerDeployment(ctx, k.Reader, k.Namespace, k.OwnerDeployment)
	if d == nil || err != nil {
		return nil, err
	}
	ref := ssa.OwnedBy(d)
	return &ref, nil
}

// Served returns which of the kept resources the API server serves, in a fixed order; none
// when the group version is not served at all.
func Served(d discovery.DiscoveryInterface) ([]schema.GroupVersionResource, error) {
	list, err := d.ServerResourcesForGroupVersion(GroupVersion)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []schema.GroupVersionResource
	for _, want := range []schema.GroupVersionResource{PrometheusRule, ServiceMonitor} {
		if slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == want.Resource }) {
			out = append(out, want)
		}
	}
	return out, nil
}
