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

package admissionpolicy

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
)

// oldestAPIServer is the CEL library set the oldest supported API server (1.32) admits in a new
// policy: its compatibility version, one minor back.
var oldestAPIServer = version.MajorMinor(1, 31)

// celOperator is the manager's identity in the policies evaluated here.
const celOperator = "system:serviceaccount:el-operator:el-manager"

// policyRequest is one admission request a policy is evaluated on.
type policyRequest struct {
	op          admission.Operation
	resource    schema.GroupVersionResource
	subresource string
	user        string
	obj, old    runtime.Object // with their TypeMeta set: nothing is converted; obj is nil on DELETE
}

// evaluatePolicy runs the policy on req as the API server's ValidatingAdmissionPolicy plugin
// does (its compiler and CEL environment for stored policies, its runtime cost budget) and
// returns the message of each validation that denies the request. A validation that cannot be
// evaluated fails the test: under failurePolicy Fail it would deny every such request.
func evaluatePolicy(t *testing.T, policy *admissionregistrationv1.ValidatingAdmissionPolicy, req policyRequest) []string {
	t.Helper()
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		t.Fatal(err)
	}
	withAuthz := plugincel.OptionalVariableDeclarations{HasAuthorizer: true}
	compiler.CompileAndStoreVariables(variables(policy), withAuthz, environment.StoredExpressions)
	var matcher matchconditions.Matcher
	if mcs := policy.Spec.MatchConditions; len(mcs) > 0 {
		accessors := make([]plugincel.ExpressionAccessor, len(mcs))
		for i := range mcs {
			accessors[i] = (*matchconditions.MatchCondition)(&mcs[i])
		}
		matcher = matchconditions.NewMatcher(compiler.CompileCondition(accessors, withAuthz, environment.StoredExpressions),
			policy.Spec.FailurePolicy, "policy", "validate", policy.Name)
	}
	validations, messages := conditions(policy)
	validator := validating.NewValidator(
		compiler.CompileCondition(validations, withAuthz, environment.StoredExpressions), matcher,
		compiler.CompileCondition(nil, withAuthz, environment.StoredExpressions),
		compiler.CompileCondition(messages, plugincel.OptionalVariableDeclarations{}, environment.StoredExpressions),
		policy.Spec.FailurePolicy, nil)

	var kind schema.GroupVersionKind
	if req.obj != nil {
		kind = req.obj.GetObjectKind().GroupVersionKind()
	} else {
		kind = req.old.GetObjectKind().GroupVersionKind() // a DELETE
	}
	attrs := admission.NewAttributesRecord(req.obj, req.old, kind, "shop", "x", req.resource, req.subresource,
		req.op, nil, false, &user.DefaultInfo{Name: req.user})
	versioned, err := admission.NewVersionedAttributes(attrs, kind, nil)
	if err != nil {
		t.Fatal(err)
	}
	result := validator.Validate(context.Background(), req.resource, versioned, nil, nil, celconfig.RuntimeCELCostBudget, nil)
	var denials []string
	for _, d := range result.Decisions {
		switch d.Evaluation {
		case validating.EvalError:
			t.Fatalf("policy %s: evaluation error: %s", policy.Name, d.Message)
		case validating.EvalDeny:
			denials = append(denials, d.Message)
		}
	}
	return denials
}

// expectCompilesOnOldestAPIServer: every expression of the policy compiles with the CEL
// libraries a 1.32 API server admits in a new policy.
func expectCompilesOnOldestAPIServer(t *testing.T, policy *admissionregistrationv1.ValidatingAdmissionPolicy) {
	t.Helper()
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(oldestAPIServer))
	if err != nil {
		t.Fatal(err)
	}
	opts := plugincel.OptionalVariableDeclarations{HasAuthorizer: true}
	for _, v := range variables(policy) {
		if r := compiler.CompileAndStoreVariable(v, opts, environment.NewExpressions); r.Error != nil {
			t.Errorf("variable %s: %v", v.GetName(), r.Error)
		}
	}
	validations, messages := conditions(policy)
	for _, e := range append(validations, messages...) {
		if e == nil {
			continue
		}
		if r := compiler.CompileCELExpression(e, opts, environment.NewExpressions); r.Error != nil {
			t.Errorf("%q: %v", e.GetExpression(), r.Error)
		}
	}
}

func variables(policy *admissionregistrationv1.ValidatingAdmissionPolicy) []plugincel.NamedExpressionAccessor {
	out := make([]plugincel.NamedExpressionAccessor, len(policy.Spec.Variables))
	for i, v := range policy.Spec.Variables {
		out[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	return out
}

// conditions are the validations and their message expressions, index for index (nil where a
// validation has none), as the plugin compiles them.
func conditions(policy *admissionregistrationv1.ValidatingAdmissionPolicy) (validations, messages []plugincel.ExpressionAccessor) {
	validations = make([]plugincel.ExpressionAccessor, len(policy.Spec.Validations))
	messages = make([]plugincel.ExpressionAccessor, len(policy.Spec.Validations))
	for i, v := range policy.Spec.Validations {
		validations[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	return validations, messages
}

func TestPoliciesCompileOnTheOldestSupportedAPIServer(t *testing.T) {
	cfg := Config{OperatorUsername: celOperator, DaemonUsername: "system:serviceaccount:el-operator:el-daemon"}
	for _, build := range []func(Config) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding){
		Build, BuildDaemonNodeScope, BuildRestartHolds,
	} {
		policy, _ := build(cfg)
		t.Run(policy.Name, func(t *testing.T) { expectCompilesOnOldestAPIServer(t, policy) })
	}
}
