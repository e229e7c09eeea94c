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

package decision

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/memory"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// A key's hold (a workload's container held for a doubt, or for the budget behind pods the
// operator never restarts) is kept in a RestartHold in the workload's namespace, so that a
// manager restart or a leader change goes on where the hold was: its onset, its current wait, its
// canary. The decision's memory is the truth while this manager leads; the records follow it, one
// write per change (the memory tells which keys changed), and are read back once when a manager
// starts leading, before its first decision.

// holdRecords writes the RestartHolds as the memory has them.
type holdRecords struct {
	client.Client
	memory  *memory.Memory
	changed <-chan event.GenericEvent

	mu sync.Mutex
	// keys are the keys of the records this process was told of, by record name.
	keys map[types.NamespacedName]rules.HoldKey
}

func (r *holdRecords) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("policy-restarthold").
		// Only what the memory tells: the records are its, nobody else writes them (an admission
		// policy refuses everyone but the garbage collector's deletes).
		WatchesRawSource(source.Channel(r.changed, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

// notify is the memory's NotifyHolds: it never blocks (a full channel drops the change, and the
// next change of the key, or its end, writes the record).
func (r *holdRecords) notify(ch chan<- event.GenericEvent) func([]rules.HoldKey) {
	return func(keys []rules.HoldKey) {
		for _, k := range keys {
			name := types.NamespacedName{Namespace: k.Workload.Namespace, Name: HoldRecordName(k)}
			r.mu.Lock()
			r.keys[name] = k
			r.mu.Unlock()
			select {
			case ch <- event.GenericEvent{Object: &policyv1alpha1.RestartHold{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name}}}:
			default:
			}
		}
	}
}

// Reconcile makes one record what the memory has: created, updated, or deleted when the hold is
// over.
func (r *holdRecords) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.mu.Lock()
	k, known := r.keys[req.NamespacedName]
	r.mu.Unlock()
	if !known {
		return ctrl.Result{}, nil
	}
	rec, held := r.memory.Record(k)
	cur := &policyv1alpha1.RestartHold{}
	err := r.Get(ctx, req.NamespacedName, cur)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	exists := err == nil
	switch {
	case !held:
		if exists {
			if err := r.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("deleting RestartHold %s: %w", req, err)
			}
		}
		r.mu.Lock()
		if _, still := r.memory.Record(k); !still {
			delete(r.keys, req.NamespacedName)
		}
		r.mu.Unlock()
		return ctrl.Result{}, nil
	case !exists:
		obj := holdObject(rec)
		if err := r.Create(ctx, obj); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return ctrl.Result{RequeueAfter: time.Second}, nil // the cache is behind: read it again
			}
			return ctrl.Result{}, fmt.Errorf("creating RestartHold %s: %w", req, err)
		}
		return ctrl.Result{}, nil
	}
	want := holdObject(rec)
	if equality.Semantic.DeepEqual(cur.Status, want.Status) {
		return ctrl.Result{}, nil
	}
	cur.Status = want.Status
	if err := r.Update(ctx, cur); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
		}
		return ctrl.Result{}, fmt.Errorf("updating RestartHold %s: %w", req, err)
	}
	return ctrl.Result{}, nil
}

// HoldRecordName names the record of a key's hold: the workload's kind and name and the
// container, with a hash of the key so that names cut to fit stay apart.
func HoldRecordName(k rules.HoldKey) string {
	sum := sha256.Sum256([]byte(k.Workload.Group + "/" + k.Workload.Kind + "/" + k.Workload.Name + "/" + k.Container))
	hash := hex.EncodeToString(sum[:])[:10]
	prefix := strings.ToLower(k.Workload.Kind + "-" + k.Workload.Name + "-" + k.Container)
	const maxPrefix = 253 - 1 - 10
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	prefix = strings.TrimRight(prefix, "-.")
	return prefix + "-" + hash
}

// holdObject is the record of a hold: owned by the workload (the pod, for a workload of one), so
// that it goes with it.
func holdObject(rec memory.HoldRecord) *policyv1alpha1.RestartHold {
	h := rec.Hold
	obj := &policyv1alpha1.RestartHold{
		ObjectMeta: metav1.ObjectMeta{Namespace: rec.Key.Workload.Namespace, Name: HoldRecordName(rec.Key),
			Labels: map[string]string{appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByDecisionController}},
		Status: policyv1alpha1.RestartHoldStatus{
			Workload:  policyv1alpha1.WorkloadReference{APIVersion: rec.Ref.APIVersion, Kind: rec.Ref.Kind, Name: rec.Ref.Name},
			Container: rec.Key.Container, Reason: string(h.Reason), Canaries: h.Canaries,
			Onset: metav1.NewTime(h.Onset), WaitStart: metav1.NewTime(h.Since),
		},
	}
	if rec.Ref.UID != "" {
		obj.OwnerReferences = []metav1.OwnerReference{{APIVersion: rec.Ref.APIVersion, Kind: rec.Ref.Kind, Name: rec.Ref.Name,
			UID: rec.Ref.UID, Controller: new(false), BlockOwnerDeletion: new(false)}}
	}
	st := &obj.Status
	if h.Period > 0 {
		st.Wait = &metav1.Duration{Duration: h.Period}
	}
	if next := h.NextCanary(); !next.IsZero() {
		st.NextCanary = new(metav1.NewTime(next))
	}
	if !h.Released.IsZero() {
		st.ReleasedAt = new(metav1.NewTime(h.Released))
	}
	if k := h.Canary; k != nil {
		st.Canary = &policyv1alpha1.HoldCanary{Pod: k.PodName, PodUID: k.Pod, Container: k.Container, ContainerID: k.Instance,
			RestartedAt: metav1.NewTime(k.At), Deadline: metav1.NewTime(k.Deadline), Evicted: k.Evicted}
	}
	return obj
}

// holdRecord reads a record back into the memory's form.
func holdRecord(obj *policyv1alpha1.RestartHold) (memory.HoldRecord, error) {
	st := &obj.Status
	ref := rules.WorkloadRef{APIVersion: st.Workload.APIVersion, Kind: st.Workload.Kind, Name: st.Workload.Name}
	for _, o := range obj.OwnerReferences {
		if o.Kind == ref.Kind && o.Name == ref.Name {
			ref.UID = o.UID
		}
	}
	if st.Container == "" || ref.Kind == "" || ref.Name == "" {
		return memory.HoldRecord{}, fmt.Errorf("RestartHold %s/%s: status.workload and status.container are required", obj.Namespace, obj.Name)
	}
	rec := memory.HoldRecord{Key: rules.HoldKey{Workload: ref.Key(obj.Namespace), Container: st.Container}, Ref: ref,
		Hold: rules.DoubtHold{Reason: policyv1alpha1.HoldReason(st.Reason), Onset: st.Onset.Time, Since: st.WaitStart.Time, Canaries: st.Canaries}}
	if st.Wait != nil {
		rec.Hold.Period = st.Wait.Duration
	}
	if st.ReleasedAt != nil {
		rec.Hold.Released = st.ReleasedAt.Time
	}
	if k := st.Canary; k != nil {
		rec.Hold.Canary = &rules.Canary{Pod: k.PodUID, PodName: k.Pod, Container: k.Container,
			Instance: k.ContainerID, Evicted: k.Evicted, At: k.RestartedAt.Time, Deadline: k.Deadline.Time}
	}
	return rec, nil
}

// loadHolds reads every record from the API server (not the cache, which may not have synced) into
// the memory: run once when this manager starts leading, before its first decision.
func loadHolds(ctx context.Context, api client.Reader, mem *memory.Memory) (int, error) {
	list := &policyv1alpha1.RestartHoldList{}
	if err := api.List(ctx, list); err != nil {
		return 0, fmt.Errorf("reading the RestartHolds: %w", err)
	}
	recs := make([]memory.HoldRecord, 0, len(list.Items))
	for i := range list.Items {
		rec, err := holdRecord(&list.Items[i])
		if err != nil {
			// Only the manager writes them (an admission policy sees to it): one it cannot read
			// is left to its workload's garbage collection, and a new hold takes its place.
			ctrl.LoggerFrom(ctx).Error(err, "skipping a RestartHold")
			continue
		}
		recs = append(recs, rec)
	}
	mem.Load(recs)
	return len(recs), nil
}
