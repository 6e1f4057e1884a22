/* SPDX-License-Identifier: MIT */
/*
 * cal_fs.c - which filesystem the calibration ran on, and whether it has a
 * journal.  Two of the table's figures depend on it:
 *   - ext4 without a journal never takes s_orphan_lock: ext4_orphan_add()
 *     and ext4_orphan_del() return before the mutex when the handle is not
 *     a journal's (v3.14 fs/ext4/namei.c, ext4_handle_valid()), so no
 *     truncating creat can sleep in them;
 *   - a create on ext4 without a journal skips every inode of the group
 *     freed in the last 5 s (305 s while its inode-table block is dirty):
 *     find_inode_bit() -> recently_deleted(), fs/ext4/ialloc.c, checked
 *     only when EXT4_SB(sb)->s_journal is NULL (v6.x), so creat_new grows
 *     with the deletions other processes made in that group.
 * The journal is seen in /proc/fs/jbd2, one entry "DEV-INODE" per journal.
 */
#include "costs.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static const char *fs_name(long type, char *buf, size_t len)
{
	switch ((unsigned long)type) {
	case 0xEF53: return "ext2/3/4";
	case 0x01021994: return "tmpfs";
	case 0x58465342: return "xfs";
	case 0x9123683E: return "btrfs";
	case 0x794C7630: return "overlayfs";
	default: snprintf(buf, len, "fs type 0x%lx", (unsigned long)type); return buf;
	}
}

/* The block device's name ("vda") from /sys/dev/block/MAJ:MIN; 0 or -1. */
static int dev_name(dev_t dev, char *out, size_t len)
{
	char link[64], target[PATH_MAX];
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return -1;
	target[n] = '\0';
	const char *base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= len)
		return -1;
	memcpy(out, base, strlen(base) + 1);
	return 0;
}

/* 1: /proc/fs/jbd2 lists a journal of dev; 0: it lists none; -1: unknown. */
static int has_journal(const char *dev)
{
	DIR *d = opendir("/proc/fs/jbd2");
	if (!d)
		return access("/proc/fs", R_OK) == 0 ? 0 : -1; /* jbd2 not loaded: none */
	size_t n = strlen(dev);
	int found = 0;
	struct dirent *e;
	while (!found && (e = readdir(d)))
		found = strncmp(e->d_name, dev, n) == 0 && e->d_name[n] == '-';
	closedir(d);
	return found;
}

void aim_cal_fs_facts(const char *dir, char *out, size_t len)
{
	struct statfs sf;
	struct stat st;
	char tbuf[32], dev[64];
	if (statfs(dir, &sf) || stat(dir, &st)) {
		snprintf(out, len, "unknown");
		return;
	}
	const char *fs = fs_name((long)sf.f_type, tbuf, sizeof(tbuf));
	if (dev_name(st.st_dev, dev, sizeof(dev))) {
		snprintf(out, len, "%s", fs);
		return;
	}
	if ((unsigned long)sf.f_type != 0xEF53) {
		snprintf(out, len, "%s on %s", fs, dev);
		return;
	}
	int j = has_journal(dev);
	snprintf(out, len, "%s on %s, %s", fs, dev,
		 j > 0 ? "journal (in /proc/fs/jbd2)" : j == 0 ? "no journal (none in /proc/fs/jbd2)"
							       : "journal unknown");
}
