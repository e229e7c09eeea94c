// Command pki writes the certificates, keys and kubeconfigs of the local one-node cluster that
// hack/local-cluster/up.sh starts: one CA, the apiserver and kubelet serving certificates, a client
// certificate per component (with the user and group names the bootstrap RBAC policy expects), the
// service-account key pair, and a kubeconfig per client.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

type keyPair struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func main() {
	dir := flag.String("dir", "", "output directory")
	nodeName := flag.String("node-name", "", "node name")
	nodeIP := flag.String("node-ip", "", "node IP")
	serviceIP := flag.String("service-ip", "10.96.0.1", "ClusterIP of the kubernetes Service")
	server := flag.String("server", "", "apiserver URL written into the kubeconfigs")
	flag.Parse()
	if *dir == "" || *nodeName == "" || *nodeIP == "" || *server == "" {
		fmt.Fprintln(os.Stderr, "usage: pki -dir DIR -node-name NAME -node-ip IP -server URL [-service-ip IP]")
		os.Exit(2)
	}
	if err := run(*dir, *nodeName, net.ParseIP(*nodeIP), net.ParseIP(*serviceIP), *server); err != nil {
		fmt.Fprintln(os.Stderr, "pki:", err)
		os.Exit(1)
	}
}

func run(dir, nodeName string, nodeIP, serviceIP net.IP, server string) error {
	if nodeIP == nil || serviceIP == nil {
		return fmt.Errorf("invalid node or service IP")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := newCert("local-cluster-ca", nil, nil, nil, nil)
	if err != nil {
		return err
	}
	if err := writePair(dir, "ca", ca); err != nil {
		return err
	}
	loopback := net.ParseIP("127.0.0.1")
	serving := map[string]struct {
		dns []string
		ips []net.IP
	}{
		"apiserver": {
			dns: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc",
				"kubernetes.default.svc.cluster.local", "localhost", nodeName},
			ips: []net.IP{loopback, nodeIP, serviceIP},
		},
		"kubelet": {dns: []string{nodeName, "localhost"}, ips: []net.IP{loopback, nodeIP}},
	}
	for name, s := range serving {
		kp, err := newCert(name, nil, s.dns, s.ips, ca)
		if err != nil {
			return err
		}
		if err := writePair(dir, name, kp); err != nil {
			return err
		}
	}
	clients := []struct{ file, cn, org string }{
		{"admin", "local-cluster-admin", "system:masters"},
		{"apiserver-kubelet-client", "kube-apiserver-kubelet-client", "system:masters"},
		{"kubelet-client", "system:node:" + nodeName, "system:nodes"},
		{"controller-manager", "system:kube-controller-manager", ""},
		{"scheduler", "system:kube-scheduler", ""},
		{"kube-proxy", "system:kube-proxy", ""},
	}
	for _, c := range clients {
		var orgs []string
		if c.org != "" {
			orgs = []string{c.org}
		}
		kp, err := newCert(c.cn, orgs, nil, nil, ca)
		if err != nil {
			return err
		}
		if err := writePair(dir, c.file, kp); err != nil {
			return err
		}
		if c.file == "apiserver-kubelet-client" {
			continue
		}
		if err := writeKubeconfig(filepath.Join(dir, c.file+".kubeconfig"), server, c.cn, ca, kp); err != nil {
			return err
		}
	}
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(sa)
	if err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "sa.key"), "EC PRIVATE KEY", keyDER); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pubDER)
}

// newCert makes a certificate signed by parent, or a self-signed CA when parent is nil. Client
// certificates have neither DNS names nor IPs; serving certificates have both usages so the
// kubelet certificate also works as a client one if ever needed.
func newCert(cn string, orgs, dns []string, ips []net.IP, parent *keyPair) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	signerCert, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA = true
		tmpl.BasicConstraintsValid = true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = nil
	} else {
		signerCert, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signerKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, key: key}, nil
}

func writePair(dir, name string, kp *keyPair) error {
	keyDER, err := x509.MarshalECPrivateKey(kp.key)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", kp.cert.Raw); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, name+".key"), "EC PRIVATE KEY", keyDER)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

func writeKubeconfig(path, server, user string, ca, kp *keyPair) error {
	keyDER, err := x509.MarshalECPrivateKey(kp.key)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}),
	}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{
		ClientCertificateData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: kp.cert.Raw}),
		ClientKeyData:         pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: user}
	cfg.CurrentContext = "local"
	return clientcmd.WriteToFile(*cfg, path)
}
