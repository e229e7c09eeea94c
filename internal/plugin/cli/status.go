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

package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/plugin/status"
)

func newStatusCommand(o *options) *cobra.Command {
	var all bool
	var operatorNS string
	cmd := &cobra.Command{
		Use:   "status [-n NAMESPACE | -A]",
		Short: "Summarise what is held now, what enrolling avoided, and what is not probed",
		Long: "status prints the policies of a namespace (or of all) with their modes, the restarts held now by reason " +
			"and since when, the RestartHolds and their canaries, the Shadow and Enforce figures (restarts avoided, " +
			"agreed, and how much later), and the enrolled pods no daemon probes and why. With -A it also lists the " +
			"nodes with the EnhancedLivenessNodeStorm condition and the nodes whose daemon does not report, which needs " +
			"read access to Nodes and to the daemons' Leases.",
		Example: "  kubectl enhancedliveness status -n shop\n  kubectl enhancedliveness status -A -o json",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usageError{fmt.Errorf("status takes no arguments, got %q", args)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.checkOutput(); err != nil {
				return err
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			ns := ""
			if !all {
				if ns, err = o.namespace(); err != nil {
					return err
				}
			}
			in, err := statusInputs(cmd.Context(), c, ns, operatorNS)
			if err != nil {
				return err
			}
			in.Now = o.now()
			s := status.Build(in)
			return o.print(s, func(w io.Writer) error { return status.Write(w, s, in.Now) })
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "Summarise every namespace, and the nodes.")
	cmd.Flags().StringVar(&operatorNS, "operator-namespace", appsv1alpha1.DefaultOperatorNamespace,
		"The namespace the operator runs in, which holds the daemons' Leases (with -A).")
	return cmd
}

// statusInputs reads a namespace's (ns "") or every namespace's policies, holds and
// LivenessNotProbed events; for all namespaces also the Nodes and the daemons' Leases.
func statusInputs(ctx context.Context, c client.Client, ns, operatorNS string) (status.Inputs, error) {
	in := status.Inputs{Scope: ns}
	policies := &policyv1alpha1.EnhancedLivenessPolicyList{}
	if err := c.List(ctx, policies, client.InNamespace(ns)); err != nil {
		return in, fmt.Errorf("reading EnhancedLivenessPolicies: %w", err)
	}
	in.Policies = policies.Items
	holds := &policyv1alpha1.RestartHoldList{}
	if err := optional(&in.Notes, "RestartHolds", c.List(ctx, holds, client.InNamespace(ns))); err != nil {
		return in, err
	}
	in.Holds = holds.Items
	events := &corev1.EventList{}
	err := c.List(ctx, events, client.InNamespace(ns), client.MatchingFields{"reason": "LivenessNotProbed"})
	if err := optional(&in.Notes, "LivenessNotProbed events", err); err != nil {
		return in, err
	}
	in.Events = events.Items
	if ns != "" {
		return in, nil
	}
	nodes := &corev1.NodeList{}
	if err := optional(&in.Notes, "Nodes (their storm condition)", c.List(ctx, nodes)); err != nil {
		return in, err
	}
	in.Nodes = nodes.Items
	if in.Nodes == nil {
		in.Nodes = []corev1.Node{}
	}
	leases := &coordinationv1.LeaseList{}
	if err := optional(&in.Notes, "the daemons' Leases in namespace "+operatorNS, c.List(ctx, leases, client.InNamespace(operatorNS))); err != nil {
		return in, err
	}
	in.Leases = leases.Items
	return in, nil
}
