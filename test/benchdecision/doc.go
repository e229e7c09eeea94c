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

// Package benchdecision measures the decision controller's throughput and latency against a real
// kube-apiserver (envtest): 2,000 enrolled pods in 50 Deployments on 20 nodes, and 200 liveness
// failures (4 per Deployment) reported at once, one NodePodProbeReport status write per node.
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s/1.37.2-linux-amd64 \
//	  go test ./test/benchdecision -run '^$' -bench . -benchtime=3x
//
// Each iteration is one round: the failures are reported, every one of them must turn into a
// ContainerRecreateRequest, and the round's decisions/s and per-failure latency (from the report
// write of the failure's node to the decision's CRR being created) are reported. Between rounds
// (timer stopped) the test plays the node daemon and the kubelet: requests finish, containers run
// under a new ID, probes succeed.
package benchdecision
