package controlplane

import (
	"fmt"
	"path/filepath"
)

// Network settings of the local cluster. No traffic goes to these
// addresses: they only fill Service and Pod fields.
const (
	serviceCIDR = "10.0.0.0/24"
	// serviceIP is the first address of serviceCIDR, the "kubernetes"
	// Service's ClusterIP; the serving certificate names it.
	serviceIP         = "10.0.0.1"
	serviceAccountIss = "https://kubernetes.default.svc.cluster.local"
	// enabledControllers are kube-controller-manager's --controllers, by the
	// aliases of k8s.io/kubernetes v1.37.2 cmd/kube-controller-manager/app
	// (apps.go: "statefulset" for statefulset-controller, "daemonset" for
	// daemonset-controller; both create and garbage-collect their own
	// ControllerRevisions, so no further controller is needed for those).
	// "root-ca-cert-publisher" (certificates.go) writes the kube-root-ca.crt
	// ConfigMap every namespace's projected ServiceAccount token volume
	// mounts: without it a real kubelet (Options.RealNode) never starts a
	// pod that mounts a token. "resourcequota" (resourcequota-controller)
	// computes a ResourceQuota's status.hard and status.used: without it the
	// ResourceQuota admission plugin finds no status.hard and enforces
	// nothing.
	enabledControllers = "deployment,replicaset,statefulset,daemonset,serviceaccount,serviceaccount-token,namespace,garbagecollector,root-ca-cert-publisher,resourcequota"
)

// ports are the TCP ports on 127.0.0.1 the components listen on.
type ports struct {
	etcdClient, etcdPeer, etcdMetrics int
	apiserver                         int
	scheduler                         int
	kwok                              int
}

func (p ports) etcdURL() string      { return fmt.Sprintf("http://127.0.0.1:%d", p.etcdClient) }
func (p ports) apiserverURL() string { return fmt.Sprintf("https://127.0.0.1:%d", p.apiserver) }

// etcdArgs runs a single-member etcd on 127.0.0.1. --unsafe-no-fsync: the
// data lives only as long as a test, so durability is traded for speed.
func etcdArgs(dataDir string, p ports) []string {
	peer := fmt.Sprintf("http://127.0.0.1:%d", p.etcdPeer)
	return []string{
		"--name=controlplane",
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + p.etcdURL(),
		"--advertise-client-urls=" + p.etcdURL(),
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=controlplane=" + peer,
		fmt.Sprintf("--listen-metrics-urls=http://127.0.0.1:%d", p.etcdMetrics),
		"--unsafe-no-fsync",
		"--log-level=warn",
	}
}

// apiserverArgs: client certificates for authentication, Node and RBAC
// authorization, and --endpoint-reconciler-type=none (otherwise the API
// server refuses 127.0.0.1 as the "kubernetes" Service's endpoint).
// ResourceQuota is among kube-apiserver's default admission plugins
// (LimitRanger too); it is named so that the quota the simulator models
// (simulator/resourcequota_admission.go) is enforced here whatever the
// defaults become.
func apiserverArgs(workDir string, k *pki, p ports) []string {
	return []string{
		"--etcd-servers=" + p.etcdURL(),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", p.apiserver),
		"--cert-dir=" + filepath.Join(workDir, "apiserver"),
		"--tls-cert-file=" + k.servingCert,
		"--tls-private-key-file=" + k.servingKey,
		"--client-ca-file=" + k.caFile,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=ResourceQuota",
		"--endpoint-reconciler-type=none",
		"--service-cluster-ip-range=" + serviceCIDR,
		"--service-account-issuer=" + serviceAccountIss,
		"--service-account-key-file=" + k.saPublicKey,
		"--service-account-signing-key-file=" + k.saPrivateKey,
		"--profiling=false",
	}
}

// controllerManagerArgs runs only the controllers a rollout needs; no
// leader election and no serving port (several control planes may run on
// one machine).
func controllerManagerArgs(kubeconfig string, k *pki) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
		"--controllers=" + enabledControllers,
		"--service-account-private-key-file=" + k.saPrivateKey,
		"--root-ca-file=" + k.caFile,
		"--profiling=false",
	}
}

// schedulerArgs serves /readyz on a free port so start-up can wait for the
// scheduler's informers to sync (anonymous access to /readyz is always
// allowed). --authentication-skip-lookup: the API server has no
// request-header CA for the scheduler to look up, which it would otherwise
// log as an error over and over.
func schedulerArgs(workDir, kubeconfig string, p ports) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--authentication-skip-lookup=true",
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", p.scheduler),
		"--cert-dir=" + filepath.Join(workDir, "scheduler"),
		"--profiling=false",
	}
}

// kwokArgs manages every Node with the Stages in stageFiles, or, beside a
// real node, only the Nodes annotated kwok.x-k8s.io/node=fake.
func kwokArgs(kubeconfig string, stageFiles []string, p ports, realNode bool) []string {
	manage := "--manage-all-nodes=true"
	if realNode {
		manage = "--manage-nodes-with-annotation-selector=" + kwokNodeSelector
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		manage,
		fmt.Sprintf("--server-address=127.0.0.1:%d", p.kwok),
	}
	for _, f := range stageFiles {
		args = append(args, "--config="+f)
	}
	return args
}

// kwokEnv points HOME at workDir: kwok also loads ~/.kwok/kwok.yaml when it
// exists, which would mix a developer's own stages into ours.
func kwokEnv(workDir string) []string {
	return []string{"HOME=" + workDir}
}
