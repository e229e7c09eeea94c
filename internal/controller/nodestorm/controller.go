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

package nodestorm

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/facts"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/memory"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/nodecondition"
)

// Event reasons on Nodes.
const (
	EventNodeStormHeld       = nodecondition.ReasonHeld
	EventRestartsIneffective = nodecondition.ReasonIneffective
	EventNoNodeStorm         = nodecondition.ReasonNone
	EventNotJudged           = nodecondition.ReasonNotJudged
	// EventNodeConditionWithheld: the node's evidence would set the condition, but more nodes
	// have it at once than nodecondition.Limit allows.
	EventNodeConditionWithheld = "NodeConditionWithheld"
)

// releaseTimeout bounds what a leader that stops spends setting its True conditions False. It
// fits in the manager pod's terminationGracePeriodSeconds (10 s) and the manager's graceful
// shutdown timeout (controller-runtime's default, 30 s). It also fits in the 5 s between the
// leader election's renew deadline (10 s) and its lease duration (15 s): a leader that lost its
// lease has stopped leading at least that long before another can start, so even then no write
// of this one lands after a new leader has read the conditions back.
const releaseTimeout = 4 * time.Second

// nodeConditions keeps the EnhancedLivenessNodeStorm condition of the Nodes from the restarts the
// decision holds NodeStorm or RestartIneffective (internal/decision/nodecondition judges it), so
// that node remediation can act on a node where several tenants' pods fail while their workloads
// pass elsewhere. It runs on the leader, beside the decision's memory, and sets what it set True
// back to False when it stops: a condition nobody judges must not outlive the manager. The
// kubelet owns Node status: each write is a strategic merge patch of this one condition
// (conditions merge by type), which neither needs nor clobbers what the kubelet writes,
// whichever write comes first.
type nodeConditions struct {
	client   client.Client
	api      client.Reader // lists the Nodes once when this manager starts leading
	facts    *facts.Builder
	memory   *memory.Memory
	recorder recorder.EventRecorder
	clock    clock.Clock
	interval time.Duration
	// grace: a new leader's memory has no holds until the decision has seen each failing pod
	// again, so it clears no condition before it has led this long.
	grace time.Duration
	// confirm: how long a node's verdict stays True before it is written (nodecondition.Confirm).
	confirm time.Duration

	loaded bool
	// set are the Nodes whose condition is True, as this process last read or wrote it; off those
	// whose condition is False.
	set, off map[string]corev1.NodeCondition
	// withheld are the Nodes whose True verdict the cap withholds now.
	withheld map[string]bool
	// pending are the Nodes judged True, not yet for confirm, and since when.
	pending map[string]time.Time
}

// Options are the Node condition's settings.
type Options struct {
	// Interval is how often the Nodes' condition is judged from the holds.
	Interval time.Duration
	// Grace: a new leader's memory has no holds until the decision has seen each failing pod
	// again (within the decision's HoldRecheckInterval), so it clears no condition before it has
	// led this long.
	Grace time.Duration
	// Confirm is how long a node's verdict must stay True before its condition is set (default
	// nodecondition.ConfirmFor).
	Confirm time.Duration
	// Clock is the manager's clock.
	Clock clock.Clock
}

// The EnhancedLivenessNodeStorm condition: the Nodes are listed once when the manager starts
// leading, and only that condition is patched into their status.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// SetupWithManager adds the runnable that keeps the Nodes' condition from what the decision's
// memory holds, read through the decision's facts builder.
func SetupWithManager(mgr ctrl.Manager, b *facts.Builder, mem *memory.Memory, o Options) error {
	if o.Confirm <= 0 {
		o.Confirm = nodecondition.ConfirmFor
	}
	return mgr.Add(&nodeConditions{client: mgr.GetClient(), api: mgr.GetAPIReader(), facts: b, memory: mem,
		recorder: mgr.GetEventRecorder("enhanced-liveness-node-condition"), clock: o.Clock,
		interval: o.Interval, grace: o.Grace, confirm: o.Confirm})
}

// NeedLeaderElection is true: only the leader has the holds, and only it writes.
func (n *nodeConditions) NeedLeaderElection() bool { return true }

// Start judges the nodes every interval until ctx ends, then sets the conditions it holds True
// to False (release).
func (n *nodeConditions) Start(ctx context.Context) error {
	started := n.clock.Now()
	t := time.NewTicker(n.interval)
	defer t.Stop()
	for {
		n.sync(ctx, n.clock.Since(started) >= n.grace)
		select {
		case <-ctx.Done():
			n.release(context.WithoutCancel(ctx))
			return nil
		case <-t.C:
		}
	}
}

// sync judges every node with a NodeStorm or RestartIneffective hold or with the condition True,
// caps how many may have it, and writes what changed. clear: a False verdict may be written.
func (n *nodeConditions) sync(ctx context.Context, clear bool) {
	log := logf.FromContext(ctx).WithName("node-condition")
	if !n.loaded {
		if err := n.load(ctx); err != nil {
			log.Error(err, "listing the Nodes' EnhancedLivenessNodeStorm conditions; trying again")
			return
		}
		n.loaded = true
	}
	r := n.facts.Reader()
	held, err := n.byNode(ctx, r)
	if err != nil {
		log.Error(err, "reading the pods held NodeStorm or RestartIneffective")
		return
	}
	daemons, err := r.ReportingDaemons(ctx)
	if err != nil {
		log.Error(err, "counting the nodes with a reporting daemon")
		return
	}
	verdicts := map[string]nodecondition.Verdict{}
	for node := range held {
		verdicts[node] = nodecondition.Judge(node, held[node])
	}
	for node := range n.set {
		if _, ok := verdicts[node]; !ok {
			verdicts[node] = nodecondition.Judge(node, nil)
		}
	}
	// A False condition that says more than "no evidence" is judged again: NotJudged (a manager
	// judges it now), TooManyNodes (the evidence may be gone).
	for node, c := range n.off {
		if _, ok := verdicts[node]; !ok && c.Reason != nodecondition.ReasonNone {
			verdicts[node] = nodecondition.Judge(node, nil)
		}
	}
	n.withhold(ctx, nodecondition.Cap(verdicts, daemons), daemons)
	if n.pending == nil {
		n.pending = map[string]time.Time{}
	}
	nodecondition.Confirm(verdicts, n.pending, func(node string) bool { _, ok := n.set[node]; return ok },
		n.clock.Now(), n.confirm)
	for _, node := range slices.Sorted(maps.Keys(verdicts)) {
		if err := n.write(ctx, node, verdicts[node], clear); err != nil {
			log.Error(err, "setting the EnhancedLivenessNodeStorm condition", "node", node)
		}
	}
	nodeStormNodes.Set(float64(len(n.set)))
}

// withhold makes the cap visible: a Warning event on each node it begins to withhold the
// condition from, a log line when the set of such nodes changes, and the gauge.
func (n *nodeConditions) withhold(ctx context.Context, nodes []string, daemons int) {
	now := map[string]bool{}
	for _, node := range nodes {
		now[node] = true
		if n.withheld[node] {
			continue
		}
		obj := &corev1.Node{}
		if err := n.api.Get(ctx, client.ObjectKey{Name: node}, obj); err == nil {
			n.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventNodeConditionWithheld, "WithholdNodeCondition",
				"the EnhancedLivenessNodeStorm condition is withheld: %d nodes have the evidence at once, more than %d (%d%% of the %d nodes with a reporting daemon, at least 1)",
				len(nodes), nodecondition.Limit(daemons), nodecondition.MaxNodesPercent, daemons)
		}
	}
	if !maps.Equal(now, n.withheld) {
		logf.FromContext(ctx).WithName("node-condition").Info("the cap withholds the EnhancedLivenessNodeStorm condition",
			"nodes", nodes, "limit", nodecondition.Limit(daemons), "reportingDaemons", daemons)
	}
	n.withheld = now
	nodeConditionWithheld.Set(float64(len(nodes)))
}

// release sets every condition this process holds True to False, NotJudged, within
// releaseTimeout: the leader is stopping (scaled to 0, uninstalled, rolled), and until a manager
// leads again nothing judges the nodes; a condition left True would make remediation act on a
// verdict nobody keeps, after every reboot of a node it keeps.
func (n *nodeConditions) release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	log := logf.FromContext(ctx).WithName("node-condition")
	for _, node := range slices.Sorted(maps.Keys(n.set)) {
		if err := n.write(ctx, node, nodecondition.NotJudged(), true); err != nil {
			log.Error(err, "setting the EnhancedLivenessNodeStorm condition False as the manager stops", "node", node)
		}
	}
	nodeStormNodes.Set(float64(len(n.set)))
}

// byNode returns the pods held NodeStorm or RestartIneffective (canaries in flight included) by
// their node, with how their workloads fare elsewhere.
func (n *nodeConditions) byNode(ctx context.Context, r *facts.Reader) (map[string][]nodecondition.Held, error) {
	out := map[string][]nodecondition.Held{}
	for _, reason := range []policyv1alpha1.HoldReason{policyv1alpha1.HoldNodeStorm, policyv1alpha1.HoldRestartIneffective} {
		for _, h := range n.memory.HeldFor(reason) {
			node, spread, err := r.Elsewhere(ctx, h.Pod, h.Container)
			if err != nil {
				return nil, err
			}
			// A pod whose own probe passes now is no evidence, whatever the memory still holds
			// for it (a canary whose hold has not ended yet).
			if node == "" || spread.Passes {
				continue
			}
			out[node] = append(out[node], nodecondition.Held{Namespace: h.Pod.Namespace, Pod: h.Pod.Name, Reason: reason,
				Workload: h.Workload.Kind + "/" + h.Workload.Name, PassingElsewhere: spread.Passing,
				FailingElsewhere: spread.Failing, Since: h.Since})
		}
	}
	return out, nil
}

// write writes the node's condition when the verdict changed it. clear: a False verdict may be
// written.
func (n *nodeConditions) write(ctx context.Context, node string, v nodecondition.Verdict, clear bool) error {
	if v.Status != corev1.ConditionTrue && !clear {
		return nil
	}
	var cur []corev1.NodeCondition
	if c, ok := n.set[node]; ok {
		cur = []corev1.NodeCondition{c}
	} else if c, ok := n.off[node]; ok {
		cur = []corev1.NodeCondition{c}
	}
	cond, write := nodecondition.Next(cur, v, n.clock.Now())
	if !write {
		return nil
	}
	obj, err := patchCondition(ctx, n.client, node, cond)
	if apierrors.IsNotFound(err) {
		delete(n.set, node)
		delete(n.off, node)
		return nil
	}
	if err != nil {
		return err
	}
	was := n.set[node]
	if cond.Status == corev1.ConditionTrue {
		n.set[node] = cond
		delete(n.off, node)
		if was.Reason != cond.Reason {
			reason := EventNodeStormHeld
			if cond.Reason == nodecondition.ReasonIneffective {
				reason = EventRestartsIneffective
			}
			n.recorder.Eventf(obj, nil, corev1.EventTypeWarning, reason, "SetNodeCondition", "%s", cond.Message)
		}
		return nil
	}
	delete(n.set, node)
	n.off[node] = cond
	// A withheld condition has had its own event (withhold).
	switch cond.Reason {
	case nodecondition.ReasonNotJudged:
		n.recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventNotJudged, "ClearNodeCondition", "%s", cond.Message)
	case nodecondition.ReasonNone:
		n.recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventNoNodeStorm, "ClearNodeCondition", "%s", cond.Message)
	}
	return nil
}

// patchCondition writes the condition into the Node's status, and nothing else.
func patchCondition(ctx context.Context, c client.Client, node string, cond corev1.NodeCondition) (*corev1.Node, error) {
	data, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{cond}}})
	if err != nil {
		return nil, err
	}
	obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}
	if err := c.Status().Patch(ctx, obj, client.RawPatch(types.StrategicMergePatchType, data)); err != nil {
		return nil, fmt.Errorf("patching the status of Node %s: %w", node, err)
	}
	return obj, nil
}

// load reads the Nodes' conditions: a manager that starts leading goes on where the last one left
// them.
func (n *nodeConditions) load(ctx context.Context) error {
	set, off, err := conditions(ctx, n.api)
	if err != nil {
		return err
	}
	n.set, n.off = set, off
	return nil
}

// conditions lists the Nodes' EnhancedLivenessNodeStorm conditions, the True ones (set) apart from
// the others (off), by node.
func conditions(ctx context.Context, r client.Reader) (set, off map[string]corev1.NodeCondition, err error) {
	set, off = map[string]corev1.NodeCondition{}, map[string]corev1.NodeCondition{}
	list := &corev1.NodeList{}
	for {
		if err := r.List(ctx, list, client.Limit(500), client.Continue(list.Continue)); err != nil {
			return nil, nil, err
		}
		for i := range list.Items {
			for _, c := range list.Items[i].Status.Conditions {
				switch {
				case c.Type != nodecondition.Type:
				case c.Status == corev1.ConditionTrue:
					set[list.Items[i].Name] = c
				default:
					off[list.Items[i].Name] = c
				}
			}
		}
		if list.Continue == "" {
			return set, off, nil
		}
	}
}
