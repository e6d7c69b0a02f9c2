package admin

import (
	"context"
	"net/http"
)

// Migrating bucket ACLs stored before Cairn gave them S3's meaning (access.MigrateLegacyACL):
// POST /admin/v1/acl-migration runs it over every bucket of every account, ?dry-run=true
// only reports what it would do. The server does the work (ACLMigrationFunc); this file is the
// route and the wire format.

// ACLMigrationFunc migrates (or, dryRun, surveys) every bucket's legacy ACL.
type ACLMigrationFunc func(ctx context.Context, dryRun bool) (ACLMigrationReport, error)

// ACLMigrationReport is the answer of POST /admin/v1/acl-migration.
type ACLMigrationReport struct {
	DryRun bool `json:"dry_run"`
	// Buckets is how many buckets were looked at.
	Buckets int `json:"buckets"`
	// Legacy lists every bucket that held an ACL with the old meaning, and what became of it.
	Legacy []ACLMigrationBucket `json:"legacy"`
	// Migrated and Refused count Legacy's entries that were (or, in a dry run, would be)
	// migrated, and those left as they are.
	Migrated int `json:"migrated"`
	Refused  int `json:"refused"`
}

// ACLMigrationBucket is one bucket with a legacy ACL.
type ACLMigrationBucket struct {
	Account string `json:"account"`
	Bucket  string `json:"bucket"`
	// Readers are the grantees whose object reads moved into the bucket policy.
	Readers []string `json:"readers,omitempty"`
	// Refused says why the bucket keeps its old ACL (empty: migrated).
	Refused string `json:"refused,omitempty"`
}

func (h *Handler) aclMigration(w http.ResponseWriter, r *http.Request) error {
	if h.cfg.ACLMigration == nil {
		return errorf(http.StatusNotImplemented, CodeNotFound, "no ACL migration here")
	}
	dry := r.URL.Query().Get("dry-run")
	if dry != "" && dry != "true" && dry != "false" {
		return errorf(http.StatusBadRequest, CodeInvalidArgument, "dry-run is true or false, not %q", dry)
	}
	rep, err := h.cfg.ACLMigration(r.Context(), dry == "true")
	if err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "admin: bucket ACL migration", "dry_run", rep.DryRun, "buckets", rep.Buckets, "legacy", len(rep.Legacy), "migrated", rep.Migrated, "refused", rep.Refused)
	writeJSON(w, http.StatusOK, rep)
	return nil
}

// MigrateACLs runs the bucket ACL migration (dryRun: reports what it would do).
func (c *Client) MigrateACLs(ctx context.Context, dryRun bool) (ACLMigrationReport, error) {
	var rep ACLMigrationReport
	path := "acl-migration"
	if dryRun {
		path += "?dry-run=true"
	}
	err := c.do(ctx, http.MethodPost, path, nil, &rep)
	return rep, err
}
