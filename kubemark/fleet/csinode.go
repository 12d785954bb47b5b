package fleet

import (
	"context"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// migratedPlugins is the annotation a v1.37 kubelet writes on its CSINode: the
// in-tree volume plugins whose volumes go through CSI drivers, sorted and
// joined as the kubelet joins them. The integration test holds it to what a
// hollow kubelet writes.
const migratedPlugins = "kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file," +
	"kubernetes.io/cinder,kubernetes.io/gce-pd,kubernetes.io/portworx-volume,kubernetes.io/vsphere-volume"

const csiNodesPath = "/apis/storage.k8s.io/v1/csinodes"

// syncCSINode does what the kubelet's CSI volume plugin does on start-up
// once it has read its Node (nodeUID): read the CSINode named after the
// node; create it when missing; replace one left by an earlier Node of the
// same name (another UID); fix the annotation when it differs. In a real
// cluster every node has one, the scheduler and the attach-detach controller
// cache them all, and NodeRestriction checks each write.
func (n *node) syncCSINode(ctx context.Context, nodeUID types.UID) error {
	want := n.csiNodeObject(nodeUID)
	create := func() error { return n.client.Post().AbsPath(csiNodesPath).Body(want).Do(ctx).Error() }
	existing := &storagev1.CSINode{}
	err := n.client.Get().AbsPath(csiNodesPath, n.name).Do(ctx).Into(existing)
	switch {
	case apierrors.IsNotFound(err):
		return create()
	case err != nil:
		return err
	case !ownedByNode(existing, n.name, nodeUID):
		// Its garbage collection may be pending; the kubelet does not wait
		// for it either. The precondition keeps a newer one.
		del := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &existing.UID}}
		err := n.client.Delete().AbsPath(csiNodesPath, n.name).Body(&del).Do(ctx).Error()
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return create()
	case existing.Annotations[v1.MigratedPluginsAnnotationKey] != migratedPlugins:
		if existing.Annotations == nil {
			existing.Annotations = map[string]string{}
		}
		existing.Annotations[v1.MigratedPluginsAnnotationKey] = migratedPlugins
		return n.client.Put().AbsPath(csiNodesPath, n.name).Body(existing).Do(ctx).Error()
	}
	return nil
}

// csiNodeObject is the CSINode a kubelet without CSI drivers creates.
func (n *node) csiNodeObject(nodeUID types.UID) *storagev1.CSINode {
	return &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{
			Name:            n.name,
			Annotations:     map[string]string{v1.MigratedPluginsAnnotationKey: migratedPlugins},
			OwnerReferences: ownerRefs(n.name, nodeUID),
		},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{}},
	}
}

// ownedByNode reports whether the Node name with this UID owns obj.
func ownedByNode(obj *storagev1.CSINode, name string, uid types.UID) bool {
	for _, ref := range obj.OwnerReferences {
		if ref.Kind == "Node" && ref.Name == name && ref.UID == uid {
			return true
		}
	}
	return false
}
