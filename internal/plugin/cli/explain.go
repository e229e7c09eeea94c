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
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/plugin/explain"
)

func newExplainCommand(o *options) *cobra.Command {
	var container string
	cmd := &cobra.Command{
		Use:   "explain POD [-c CONTAINER]",
		Short: "Explain what the operator does with a pod's liveness probes, and why",
		Long: "explain prints, for each container of the pod that has a liveness probe: its mode, the probe as the node " +
			"daemon runs it, the last results, the current decision and the rule that made it, the hold and what ends it, " +
			"what the kubelet did or would have done, and the restart requests. It needs only read access to the pod's " +
			"namespace; with read access to the node's NodePodProbeReport it also shows the daemon's last result.",
		Example: "  kubectl enhancedliveness explain web-5d8f9-abcde -n shop\n  kubectl enhancedliveness explain web-5d8f9-abcde -c app -o yaml",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("explain takes one pod name, got %d arguments", len(args))}
			}
			return nil
		},
		ValidArgsFunction: o.completePods,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.checkOutput(); err != nil {
				return err
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			ns, err := o.namespace()
			if err != nil {
				return err
			}
			in, err := reader{c}.explainInputs(cmd.Context(), ns, args[0])
			if err != nil {
				return err
			}
			in.Now = o.now()
			x := explain.Build(in)
			if container != "" {
				if x, err = onlyContainer(x, container); err != nil {
					return err
				}
			}
			return o.print(x, func(w io.Writer) error { return explain.Write(w, x, in.Now) })
		},
	}
	cmd.Flags().StringVarP(&container, "container", "c", "", "Explain only this container.")
	return cmd
}

// onlyContainer keeps one container of the explanation; a container it does not have is an error
// that names what it has.
func onlyContainer(x explain.Explanation, name string) (explain.Explanation, error) {
	i := slices.IndexFunc(x.Containers, func(c explain.Container) bool { return c.Name == name })
	if i < 0 {
		names := make([]string, 0, len(x.Containers))
		for _, c := range x.Containers {
			names = append(names, c.Name)
		}
		return x, fmt.Errorf("--container: pod %s has no container %q with a liveness probe (it has %v)", x.Pod, name, names)
	}
	x.Containers = x.Containers[i : i+1]
	return x, nil
}
