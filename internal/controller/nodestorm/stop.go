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
	"fmt"
	"maps"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/nodecondition"
)

// StopOptions say which manager Stop stops and how long it waits for it.
type StopOptions struct {
	// Manager is the manager's Deployment.
	Manager types.NamespacedName
	// Timeout bounds the wait for the manager's pods to end.
	Timeout time.Duration
	// Poll is how often the pods are listed while Stop waits (default 1 s).
	Poll time.Duration
}

// StopResult is what Stop did.
type StopResult struct {
	// Scaled: the Deployment was found and scaled to 0.
	Scaled bool
	// Remaining are the manager's pods still there when the wait ended (none after a clean stop).
	Remaining []string
	// Released are the Nodes whose condition Stop set False itself.
	Released []string
}

// Stop is what an uninstall runs before it deletes the manager together with its RBAC (the
// chart's pre-delete hook runs `manager stop`). It scales the manager's Deployment to 0 and waits
// for its pods to end: the leader sets False the conditions it holds True as it stops, while its
// permissions still stand. Then it sets False (NotJudged) every condition still True, which a
// manager that crashed or was stopped earlier left: a condition nobody judges must not outlive the
// operator, or node remediation acts on it after every reboot of the node. Pods that outlive the
// timeout (a node that does not answer) are reported, not waited for: they cannot write either.
func Stop(ctx context.Context, c client.Client, o StopOptions) (StopResult, error) {
	var res StopResult
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	d := &appsv1.Deployment{}
	err := c.Get(ctx, o.Manager, d)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return res, fmt.Errorf("reading the manager Deployment %s: %w", o.Manager, err)
	default:
		if res.Remaining, err = scaleToZero(ctx, c, d, o); err != nil {
			return res, err
		}
		res.Scaled = true
	}
	res.Released, err = releaseAll(ctx, c)
	return res, err
}

// scaleToZero scales the Deployment to 0 and waits up to o.Timeout for its pods to end; it
// returns those left.
func scaleToZero(ctx context.Context, c client.Client, d *appsv1.Deployment, o StopOptions) ([]string, error) {
	if err := c.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":0}}`))); err != nil {
		return nil, fmt.Errorf("scaling the manager Deployment %s to 0: %w", o.Manager, err)
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("the selector of the manager Deployment %s: %w", o.Manager, err)
	}
	var left []string
	poll := func(ctx context.Context) (bool, error) {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(o.Manager.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return false, fmt.Errorf("listing the pods of the manager Deployment %s: %w", o.Manager, err)
		}
		left = left[:0]
		for i := range pods.Items {
			left = append(left, pods.Items[i].Name)
		}
		return len(left) == 0, nil
	}
	err = wait.PollUntilContextTimeout(ctx, o.Poll, o.Timeout, true, poll)
	if err != nil && !wait.Interrupted(err) {
		return nil, err
	}
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return left, nil
}

// releaseAll sets every EnhancedLivenessNodeStorm condition still True to False, NotJudged.
func releaseAll(ctx context.Context, c client.Client) ([]string, error) {
	set, _, err := conditions(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("listing the Nodes' %s conditions: %w", nodecondition.Type, err)
	}
	var released []string
	for _, node := range slices.Sorted(maps.Keys(set)) {
		cond, _ := nodecondition.Next([]corev1.NodeCondition{set[node]}, nodecondition.Stopped(), time.Now())
		_, err := patchCondition(ctx, c, node, cond)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return released, err
		}
		logf.FromContext(ctx).Info("set the node condition False", "node", node, "condition", nodecondition.Type)
		released = append(released, node)
	}
	return released, nil
}
