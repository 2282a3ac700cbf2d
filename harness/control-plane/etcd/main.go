// Command etcd is the etcd server, built from go.etcd.io/etcd/server/v3 for draguard's
// integration tests (Debian's etcd is too old for Kubernetes 1.37).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
