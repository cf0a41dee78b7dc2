-- Attachments: images and text files sent with user messages. Their bytes live in files in the
-- data directory, named by their SHA-256 (de-duplicated); a row here exists only once its file is
-- whole on disk. An image also has a copy to send (the long side at most 2048 px) and a thumbnail,
-- themselves content-addressed files (the same as the original when it is small enough).
CREATE TABLE attachments (
    sha256      TEXT PRIMARY KEY NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('image', 'text')),
    media_type  TEXT NOT NULL,
    size        INTEGER NOT NULL,
    width       INTEGER,
    height      INTEGER,
    send_sha256 TEXT,
    send_media_type TEXT,
    thumb_sha256 TEXT,
    thumb_media_type TEXT,
    created_at  INTEGER NOT NULL
) STRICT;

-- Which message carries which attachment, in order, under the name it was attached with.
CREATE TABLE message_attachments (
    message_id TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    sha256     TEXT NOT NULL REFERENCES attachments (sha256),
    name       TEXT NOT NULL,
    PRIMARY KEY (message_id, position)
) STRICT;

CREATE INDEX message_attachments_by_file ON message_attachments (sha256);
