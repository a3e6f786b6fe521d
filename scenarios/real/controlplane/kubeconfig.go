package controlplane

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// clusterName is the cluster, context and user name in every kubeconfig
// written here.
const clusterName = "controlplane"

// writeKubeconfig writes a kubeconfig for server that trusts caPEM and
// authenticates with the client certificate kp; the data is embedded, so
// the file can be copied elsewhere.
func writeKubeconfig(path, server string, caPEM []byte, kp *keyPair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[clusterName] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.CertPEM, ClientKeyData: kp.KeyPEM}
	cfg.Contexts[clusterName] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: clusterName, Namespace: "default"}
	cfg.CurrentContext = clusterName
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("controlplane: write kubeconfig %s: %w", path, err)
	}
	return nil
}

// restConfig returns a client configuration for server authenticating with
// kp. QPS and Burst are raised from client-go's 5/10 so tests that list and
// watch a lot are not throttled client-side.
func restConfig(server string, caPEM []byte, kp *keyPair) *rest.Config {
	return &rest.Config{
		Host: server,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   caPEM,
			CertData: kp.CertPEM,
			KeyData:  kp.KeyPEM,
		},
		QPS:   100,
		Burst: 200,
	}
}
