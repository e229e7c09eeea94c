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
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
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
	EventNodeStormHeld = nodecondition.ReasonHeld
	EventNoNodeStorm   = nodecondition.ReasonNone
)

// nodeConditions keeps the EnhancedLivenessNodeStorm condition of the Nodes from the restarts the
// decision holds NodeStorm (internal/decision/nodecondition judges it), so that node remediation
// can act on a node where several tenants' pods fail while their workloads pass elsewhere. It runs
// on the leader, beside the decision's memory. The kubelet owns Node status: each write is a
// strategic merge patch of this one condition (conditions merge by type), which neither needs
// nor clobbers what the kubelet writes, whichever write comes first.
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

	loaded bool
	// set are the Nodes whose condition is True, as this process last read or wrote it.
	set map[string]corev1.NodeCondition
}

// NeedLeaderElection is true: only the leader has the holds, and only it writes.
func (n *nodeConditions) NeedLeaderElection() bool { return true }

// Start judges the nodes every interval until ctx ends.
func (n *nodeConditions) Start(ctx context.Context) error {
	started := n.clock.Now()
	t := time.NewTicker(n.interval)
	defer t.Stop()
	for {
		n.sync(ctx, n.clock.Since(started) >= n.grace)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// sync judges every node with a NodeStorm hold or with the condition True, and writes what
// changed. clear: a False verdict may be written.
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
		log.Error(err, "reading the pods held NodeStorm")
		return
	}
	nodes := make([]string, 0, len(held)+len(n.set))
	for node := range held {
		nodes = append(nodes, node)
	}
	for node := range n.set {
		if _, ok := held[node]; !ok {
			nodes = append(nodes, node)
		}
	}
	slices.Sort(nodes)
	for _, node := range nodes {
		if err := n.write(ctx, node, nodecondition.Judge(node, held[node]), clear); err != nil {
			log.Error(err, "setting the EnhancedLivenessNodeStorm condition", "node", node)
		}
	}
	nodeStormNodes.Set(float64(len(n.set)))
}

// byNode returns the pods held NodeStorm (canaries in flight included) by their node, with how
// their workloads fare elsewhere.
func (n *nodeConditions) byNode(ctx context.Context, r *facts.Reader) (map[string][]nodecondition.Held, error) {
	out := map[string][]nodecondition.Held{}
	for _, h := range n.memory.HeldFor(policyv1alpha1.HoldNodeStorm) {
		node, passing, err := r.Elsewhere(ctx, h.Pod, h.Container)
		if err != nil {
			return nil, err
		}
		if node == "" {
			continue
		}
		out[node] = append(out[node], nodecondition.Held{Namespace: h.Pod.Namespace, Pod: h.Pod.Name,
			Workload: h.Workload.Kind + "/" + h.Workload.Name, PassingElsewhere: passing, Since: h.Since})
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
	}
	cond, write := nodecondition.Next(cur, v, n.clock.Now())
	if !write {
		return nil
	}
	obj, err := n.patch(ctx, node, cond)
	if apierrors.IsNotFound(err) {
		delete(n.set, node)
		return nil
	}
	if err != nil {
		return err
	}
	wasSet := nodecondition.IsTrue(cur)
	if cond.Status == corev1.ConditionTrue {
		n.set[node] = cond
		if !wasSet {
			n.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventNodeStormHeld, "SetNodeCondition", "%s", cond.Message)
		}
		return nil
	}
	delete(n.set, node)
	n.recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventNoNodeStorm, "ClearNodeCondition", "%s", cond.Message)
	return nil
}

// patch writes the condition into the Node's status, and nothing else.
func (n *nodeConditions) patch(ctx context.Context, node string, cond corev1.NodeCondition) (*corev1.Node, error) {
	data, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{cond}}})
	if err != nil {
		return nil, err
	}
	obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}
	if err := n.client.Status().Patch(ctx, obj, client.RawPatch(types.StrategicMergePatchType, data)); err != nil {
		return nil, fmt.Errorf("patching the status of Node %s: %w", node, err)
	}
	return obj, nil
}

// load reads which Nodes have the condition True: a manager that starts leading goes on where the
// last one left them.
func (n *nodeConditions) load(ctx context.Context) error {
	set := map[string]corev1.NodeCondition{}
	list := &corev1.NodeList{}
	for {
		if err := n.api.List(ctx, list, client.Limit(500), client.Continue(list.Continue)); err != nil {
			return err
		}
		for i := range list.Items {
			for _, c := range list.Items[i].Status.Conditions {
				if c.Type == nodecondition.Type && c.Status == corev1.ConditionTrue {
					set[list.Items[i].Name] = c
				}
			}
		}
		if list.Continue == "" {
			break
		}
	}
	n.set = set
	return nil
}
