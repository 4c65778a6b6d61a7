"""A real Kubernetes control plane for labs: kube-apiserver, kubectl and etcd, built from their
Go modules at pinned releases (or found on PATH), and run on the loopback."""
