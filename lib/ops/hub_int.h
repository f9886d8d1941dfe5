/* hub_int.h - shared by the Hub files of lib/ops (names, cache, verify,
 * records). Not public. */
#ifndef MF_HUB_INT_H
#define MF_HUB_INT_H
#include "core/core.h"

/* A parsed Hub name, before the cache is consulted (borrowed buffers of
 * fixed size: every part is bounded by the checks of hub_parse_name). */
typedef struct hub_name {
    char type[16];      /* "model", "dataset", "space" */
    char id[256];       /* "ORG/NAME" */
    char revision[256]; /* "main" when none */
    char file[1024];    /* "" for the whole repo */
} hub_name;

/* 1: arg is a Hub name, filled in; 0: it is not one (a path); -1: it
 * looks like one but breaks a rule (st says which). */
int hub_parse_name(const char *arg, hub_name *n, mf_status *st);
/* "models--ORG--NAME" for the repo (malloc'd). */
char *hub_repo_folder(const char *cache_dir, const char *type, const char *id);
/* The folder's type and id from its name ("models--A--B" -> "model", "A/B");
 * false when the name is not a repo folder's. */
bool hub_folder_repo(const char *folder, char type[16], char id[256]);
/* The commit REV resolves to in a repo folder: refs/REV's content, else REV
 * itself when snapshots/REV exists. false when neither. */
bool hub_commit_of(const char *repo_dir, const char *rev, char commit[256]);
/* A blob name: 64 lower-hex (SHA-256) or 40 (git SHA-1); 0 otherwise. */
int hub_blob_name_kind(const char *name);
/* The hasher a blob's name promises (NULL when out of memory): SHA-256 of
 * the content for a 64-hex name; for a 40-hex one git's blob SHA-1, whose
 * input starts with "blob SIZE\0" (fed here). */
mf_hasher *hub_blob_hasher(const char *blob, uint64_t size);
/* A relative path that stays inside its folder: not empty or absolute, no
 * "." or ".." part, no backslash or control character. */
bool hub_safe_rel_path(const char *p);
/* The URL of n's file at commit (NULL: n's revision), or with api the
 * repo_info URL of that revision (malloc'd; NULL when out of memory). */
char *hub_url(const hub_name *n, const char *commit, bool api);
#endif
