package watch

import "golang.org/x/sys/unix"

// eventlessFS reports whether dir is on a filesystem where inotify does not
// see changes made by other machines or by the host of a VM or container
// (NFS, SMB, 9p as in WSL 2's /mnt/c, FUSE as in sshfs and Docker Desktop's
// file sharing), and names it.
func eventlessFS(dir string) (string, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "", false
	}
	return remoteFSName(uint32(st.Type))
}

func remoteFSName(magic uint32) (string, bool) {
	switch magic {
	case unix.NFS_SUPER_MAGIC:
		return "NFS", true
	case unix.SMB_SUPER_MAGIC, unix.SMB2_SUPER_MAGIC, unix.CIFS_SUPER_MAGIC:
		return "SMB", true
	case unix.V9FS_MAGIC:
		return "9p", true
	case unix.FUSE_SUPER_MAGIC:
		return "FUSE", true
	case unix.AFS_SUPER_MAGIC:
		return "AFS", true
	case unix.CEPH_SUPER_MAGIC:
		return "Ceph", true
	}
	return "", false
}
