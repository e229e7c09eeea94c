module github.com/operator-framework/ansible-operator-plugins

go 1.26.3

require sigs.k8s.io/kubebuilder/v4 v4.6.0
