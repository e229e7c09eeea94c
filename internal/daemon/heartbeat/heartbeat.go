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

// Package heartbeat keeps the node daemon's coordination.k8s.io Lease current, so that the
// decision controller can tell a reporting daemon from a dead one.
package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// Heartbeat renews the Lease DaemonLeasePrefix+NodeName in Namespace every Interval.
// It is a manager.Runnable that runs on every replica (no leader election: one daemon per node).
type Heartbeat struct {
	Client    client.Client
	NodeName  string
	Namespace string
	// Interval between renewals; DaemonLeaseRenewSeconds when zero.
	Interval time.Duration
	// DurationSeconds written as leaseDurationSeconds; DaemonLeaseDuration when zero.
	DurationSeconds int32
	Clock           clock.WithTicker
	// Started is when this daemon process started (default: when Start is called). The first
	// renewal of the process writes it as the Lease's acquireTime: results the NodePodProbe
	// status carries from before it were taken by an earlier instance and are not trusted.
	Started time.Time

	acquired bool // this process wrote acquireTime
}

// LeaseName is the name of the Lease of the daemon on node.
func LeaseName(node string) string { return appsv1alpha1.DaemonLeasePrefix + node }

// NeedLeaderElection is false: every node's daemon holds its own Lease.
func (h *Heartbeat) NeedLeaderElection() bool { return false }

// Start renews the Lease at once and then every Interval until ctx ends.
func (h *Heartbeat) Start(ctx context.Context) error {
	if h.NodeName == "" || h.Namespace == "" {
		return errors.New("heartbeat: NodeName and Namespace are required")
	}
	clk := h.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	if h.Started.IsZero() {
		h.Started = clk.Now()
	}
	interval := h.Interval
	if interval <= 0 {
		interval = appsv1alpha1.DaemonLeaseRenewSeconds * time.Second
	}
	log := logf.FromContext(ctx).WithName("heartbeat")
	t := clk.NewTicker(interval)
	defer t.Stop()
	for {
		if err := h.Renew(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "renewing the daemon Lease", "lease", LeaseName(h.NodeName))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// Renew creates the Lease or moves its renewTime to now, retrying once on a write conflict. The
// first renewal of the process also sets acquireTime to Started.
func (h *Heartbeat) Renew(ctx context.Context) error {
	clk := h.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	dur := h.DurationSeconds
	if dur <= 0 {
		dur = appsv1alpha1.DaemonLeaseDuration
	}
	key := client.ObjectKey{Namespace: h.Namespace, Name: LeaseName(h.NodeName)}
	var err error
	for range 2 {
		now := metav1.NewMicroTime(clk.Now())
		started := now
		if !h.Started.IsZero() {
			started = metav1.NewMicroTime(h.Started)
		}
		lease := &coordinationv1.Lease{}
		err = h.Client.Get(ctx, key, lease)
		switch {
		case apierrors.IsNotFound(err):
			lease = &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
				Spec: coordinationv1.LeaseSpec{
					HolderIdentity:       ptr.To(h.NodeName),
					LeaseDurationSeconds: ptr.To(dur),
					AcquireTime:          &started,
					RenewTime:            &now,
				},
			}
			err = h.Client.Create(ctx, lease)
		case err == nil:
			if !h.acquired || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != h.NodeName {
				// A restarted daemon (or a recreated node of the same name) takes the Lease over.
				lease.Spec.HolderIdentity = ptr.To(h.NodeName)
				lease.Spec.AcquireTime = &started
			}
			lease.Spec.LeaseDurationSeconds = ptr.To(dur)
			lease.Spec.RenewTime = &now
			err = h.Client.Update(ctx, lease)
		}
		if err == nil {
			h.acquired = true
			break
		}
		if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("lease %s: %w", key, err)
	}
	return nil
}
