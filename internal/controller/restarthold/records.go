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

package restarthold

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
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/memory"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/apiclock"
)

// A key's hold (a workload's container held for a doubt, or for the budget behind pods the
// operator never restarts) is kept in a RestartHold in the workload's namespace, so that a
// manager restart or a leader change goes on where the hold was: its onset, its current wait, its
// canary. The decision's memory is the truth while this manager leads; the records follow it, one
// write per change (the memory tells which keys changed), and are read back once when a manager
// starts leading, before its first decision. A canary's record is written before its restart is
// requested (WriteNow); every other change follows through the controller's queue, which keeps
// each record once however often it is told, so that no change is lost to a slow writer. Times
// are on the API server's clock (internal/manager/apiclock), the one clock every replica measures.

// Records writes the RestartHolds as the memory has them, and reads them back into the memory
// when this manager starts leading (Load).
type Records struct {
	client.Client
	// api reads the records from the API server, for a write that cannot wait for the cache.
	api    client.Reader
	memory *memory.Memory
	clock  *apiclock.Clock

	mu sync.Mutex
	// keys are the keys of the records this process was told of, by record name.
	keys map[types.NamespacedName]rules.HoldKey
	// queue is the controller's once it has started; pending are the records told of before.
	queue   workqueue.TypedRateLimitingInterface[reconcile.Request]
	pending map[types.NamespacedName]struct{}

	loadMu sync.Mutex
	loaded bool
}

// New returns the records of the memory's holds, their times on the API server's clock clk. The
// memory tells it which keys changed (memory.NotifyHolds(records.Notify)).
func New(mgr ctrl.Manager, mem *memory.Memory, clk *apiclock.Clock) *Records {
	return &Records{Client: mgr.GetClient(), api: mgr.GetAPIReader(), memory: mem, clock: clk,
		keys: map[types.NamespacedName]rules.HoldKey{}, pending: map[types.NamespacedName]struct{}{}}
}

// +kubebuilder:rbac:groups=policy.enhancedliveness.io,resources=restartholds,verbs=get;list;watch;create;update;delete

// SetupWithManager registers the controller that writes the records.
func (r *Records) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("policy-restarthold").
		// Only what the memory tells: the records are its, nobody else writes them (an admission
		// policy refuses everyone but the deletes of the garbage collector and the namespace
		// controller, and their updates of only ownerReferences and finalizers).
		WatchesRawSource(source.Func(r.start)).
		Complete(r)
}

// start takes the controller's queue, with the records told of before it started.
func (r *Records) start(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queue = q
	for name := range r.pending {
		q.Add(reconcile.Request{NamespacedName: name})
	}
	clear(r.pending)
	return nil
}

// Notify is the memory's NotifyHolds. It never blocks and never drops a change: the queue keeps a
// record once however often it is told, and its write takes what the memory has then.
func (r *Records) Notify(keys []rules.HoldKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys {
		name := holdRecordKey(k)
		r.keys[name] = k
		if r.queue == nil {
			r.pending[name] = struct{}{}
			continue
		}
		r.queue.Add(reconcile.Request{NamespacedName: name})
	}
}

// Reconcile makes one record what the memory has.
func (r *Records) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.mu.Lock()
	k, known := r.keys[req.NamespacedName]
	r.mu.Unlock()
	if !known {
		return ctrl.Result{}, nil
	}
	again, err := r.write(ctx, r.Client, req.NamespacedName, k)
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: again}, nil
}

// WriteNow writes the key's record at once, read from the API server: a canary is in its record
// before the restart it releases is requested, so that a next leader never releases another one
// within the hold's wait.
func (r *Records) WriteNow(ctx context.Context, k rules.HoldKey) error {
	name := holdRecordKey(k)
	r.mu.Lock()
	r.keys[name] = k
	r.mu.Unlock()
	for range 5 {
		again, err := r.write(ctx, r.api, name, k)
		if err != nil || again == 0 {
			return err
		}
	}
	return fmt.Errorf("RestartHold %s: changed under each of 5 writes", name)
}

// write makes one record what the memory has, the record read through reader: created, updated,
// or deleted when the hold is over. It returns when to try again when the record changed under
// it (0: done).
func (r *Records) write(ctx context.Context, reader client.Reader, name types.NamespacedName, k rules.HoldKey) (time.Duration, error) {
	cur := &policyv1alpha1.RestartHold{}
	err := reader.Get(ctx, name, cur)
	if err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	exists := err == nil
	// The memory is read after the record: a write made in between (a canary's) makes this one
	// conflict, so an older state never overwrites a newer one.
	rec, held := r.memory.Record(k)
	switch {
	case !held:
		if exists {
			uid, rv := cur.UID, cur.ResourceVersion
			if err := r.Delete(ctx, cur, client.Preconditions{UID: &uid, ResourceVersion: &rv}); err != nil {
				if apierrors.IsConflict(err) {
					return 200 * time.Millisecond, nil
				}
				if !apierrors.IsNotFound(err) {
					return 0, fmt.Errorf("deleting RestartHold %s: %w", name, err)
				}
			}
		}
		r.mu.Lock()
		if _, still := r.memory.Record(k); !still {
			delete(r.keys, name)
		}
		r.mu.Unlock()
		return 0, nil
	case !exists:
		if err := r.Create(ctx, holdObject(rec, r.clock.Read())); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return time.Second, nil // the cache is behind: read it again
			}
			return 0, fmt.Errorf("creating RestartHold %s: %w", name, err)
		}
		return 0, nil
	}
	want := holdObject(rec, r.clock.Read())
	if equality.Semantic.DeepEqual(cur.Status, want.Status) {
		return 0, nil
	}
	cur.Status = want.Status
	if err := r.Update(ctx, cur); err != nil {
		if apierrors.IsConflict(err) {
			return 200 * time.Millisecond, nil
		}
		return 0, fmt.Errorf("updating RestartHold %s: %w", name, err)
	}
	return 0, nil
}

// holdRecordKey is the namespace and name of a key's record.
func holdRecordKey(k rules.HoldKey) types.NamespacedName {
	return types.NamespacedName{Namespace: k.Workload.Namespace, Name: HoldRecordName(k)}
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
// that it goes with it; its times on the API server's clock as at.
func holdObject(rec memory.HoldRecord, at apiclock.Reading) *policyv1alpha1.RestartHold {
	h := rec.Hold
	obj := &policyv1alpha1.RestartHold{
		ObjectMeta: metav1.ObjectMeta{Namespace: rec.Key.Workload.Namespace, Name: HoldRecordName(rec.Key),
			Labels: map[string]string{appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByDecisionController}},
		Status: policyv1alpha1.RestartHoldStatus{
			Workload:  policyv1alpha1.WorkloadReference{APIVersion: rec.Ref.APIVersion, Kind: rec.Ref.Kind, Name: rec.Ref.Name},
			Container: rec.Key.Container, Reason: string(h.Reason), Canaries: h.Canaries,
			Onset: metav1.NewTime(at.ToAPI(h.Onset)), WaitStart: metav1.NewTime(at.ToAPI(h.Since)),
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
		st.NextCanary = new(metav1.NewTime(at.ToAPI(next)))
	}
	if !h.Released.IsZero() {
		st.ReleasedAt = new(metav1.NewTime(at.ToAPI(h.Released)))
	}
	if k := h.Canary; k != nil {
		st.Canary = &policyv1alpha1.HoldCanary{Pod: k.PodName, PodUID: k.Pod, Container: k.Container, ContainerID: k.Instance,
			RestartedAt: metav1.NewTime(at.ToAPI(k.At)), Deadline: metav1.NewTime(at.ToAPI(k.Deadline)), Evicted: k.Evicted}
	}
	return obj
}

// holdRecord reads a record back into the memory's form, its times on this process's clock as at
// converts them; ahead is how far the latest of them lay in the future of the API server's clock
// (zero: none did), each such time taken as now.
func holdRecord(obj *policyv1alpha1.RestartHold, at apiclock.Reading) (memory.HoldRecord, time.Duration, error) {
	st := &obj.Status
	ref := rules.WorkloadRef{APIVersion: st.Workload.APIVersion, Kind: st.Workload.Kind, Name: st.Workload.Name}
	for _, o := range obj.OwnerReferences {
		if o.Kind == ref.Kind && o.Name == ref.Name {
			ref.UID = o.UID
		}
	}
	if st.Container == "" || ref.Kind == "" || ref.Name == "" {
		return memory.HoldRecord{}, 0, fmt.Errorf("RestartHold %s/%s: status.workload and status.container are required", obj.Namespace, obj.Name)
	}
	var ahead time.Duration
	local := func(t time.Time) time.Time {
		l, a := at.FromAPI(t)
		ahead = max(ahead, a)
		return l
	}
	rec := memory.HoldRecord{Key: rules.HoldKey{Workload: ref.Key(obj.Namespace), Container: st.Container}, Ref: ref,
		Hold: rules.DoubtHold{Reason: policyv1alpha1.HoldReason(st.Reason), Onset: local(st.Onset.Time), Since: local(st.WaitStart.Time),
			Canaries: st.Canaries}}
	if st.Wait != nil {
		rec.Hold.Period = st.Wait.Duration
	}
	if st.ReleasedAt != nil {
		rec.Hold.Released = local(st.ReleasedAt.Time)
	}
	if k := st.Canary; k != nil {
		restarted, deadline, a := at.SpanFromAPI(k.RestartedAt.Time, k.Deadline.Time)
		ahead = max(ahead, a)
		rec.Hold.Canary = &rules.Canary{Pod: k.PodUID, PodName: k.Pod, Container: k.Container,
			Instance: k.ContainerID, Evicted: k.Evicted, At: restarted, Deadline: deadline}
	}
	return rec, ahead, nil
}

// Load reads the holds' records into the memory once, before this manager's first decision: the
// decision runs on the leader only, so it calls Load when it starts leading.
func (r *Records) Load(ctx context.Context) error {
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	if r.loaded {
		return nil
	}
	n, clamped, err := loadHolds(ctx, r.api, r.memory, r.clock)
	if err != nil {
		return err
	}
	r.loaded = true
	// Written again at once with the times taken: a next leader must not clamp them again to
	// its own now.
	r.Notify(clamped)
	logf.FromContext(ctx).Info("loaded the holds kept in RestartHolds", "holds", n, "clamped", len(clamped))
	return nil
}

// loadHolds reads every record from the API server (not the cache, which may not have synced) into
// the memory: run once when this manager starts leading, before its first decision. It returns
// the number of holds loaded and the keys of those with a time clamped (FromAPI), whose records
// are to be written again with the times the memory took.
func loadHolds(ctx context.Context, api client.Reader, mem *memory.Memory, clk *apiclock.Clock) (int, []rules.HoldKey, error) {
	list := &policyv1alpha1.RestartHoldList{}
	if err := api.List(ctx, list); err != nil {
		return 0, nil, fmt.Errorf("reading the RestartHolds: %w", err)
	}
	at := clk.Read()
	log := ctrl.LoggerFrom(ctx)
	recs := make([]memory.HoldRecord, 0, len(list.Items))
	var clamped []rules.HoldKey
	for i := range list.Items {
		obj := &list.Items[i]
		rec, ahead, err := holdRecord(obj, at)
		if err != nil {
			// Only the manager writes them (an admission policy sees to it): one it cannot read
			// is left to its workload's garbage collection, and a new hold takes its place.
			log.Error(err, "skipping a RestartHold")
			continue
		}
		if ahead > 0 {
			apiclock.Clamped(log, apiclock.ObjectRestartHold, obj.Namespace+"/"+obj.Name, ahead)
			clamped = append(clamped, rec.Key)
		}
		recs = append(recs, rec)
	}
	mem.Load(recs)
	return len(recs), clamped, nil
}
