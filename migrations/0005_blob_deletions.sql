-- Objects in the blob store (S3) whose attachments were deleted: written in the delete's
-- transaction and removed by housekeeping once the object is gone, so an object is
-- removed only after the delete of its row has committed.
CREATE TABLE blob_deletions (
    blob_key     TEXT PRIMARY KEY,
    requested_at TEXT NOT NULL
);
