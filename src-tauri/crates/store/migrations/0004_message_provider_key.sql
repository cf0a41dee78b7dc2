-- Whether a reply was answered with the provider-level key (not a pool key).
ALTER TABLE messages ADD COLUMN provider_key INTEGER NOT NULL DEFAULT 0 CHECK (provider_key IN (0, 1));
