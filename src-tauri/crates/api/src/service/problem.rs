//! What the services refuse in an input that only they can check (it needs the store, or the
//! world): a rule per kind of refusal, with what its wording needs. The transport words them;
//! nothing here knows how.

/// A rule of the services' own that an input broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// A default model that is not among the provider's models.
    NotAModel,
    /// A stored provider of a kind this build does not know.
    UnknownKind(String),
    /// The key ids of a reorder are not each of the provider's `count` keys once.
    IdsMismatch { count: usize },
    /// There is no user message to answer.
    NothingToAnswer,
    /// The chat's provider was deleted: choose another.
    ProviderDeleted,
    /// The provider lists no models: give one.
    NoModels,
    /// `from` is not before `to`.
    RangeOrder,
    /// A file the user chose could not be written (`reason`: the path and the system's words).
    CannotWrite { reason: String },
    /// Another provider has this name (compared without regard to case): two would look the
    /// same in every picker.
    NameTaken,
    /// Plain `http` to a host beyond this machine, without the user saying it is on their own
    /// network: the keys would travel unencrypted.
    PlainHttpNeedsConsent,
    /// An Azure OpenAI provider whose base URL is not `https://RESOURCE.openai.azure.com/openai/v1`
    /// with a resource's name (2 to 64 lowercase letters, digits and hyphens).
    AzureResourceUrl,
    /// An Amazon Bedrock provider whose base URL is not
    /// `https://bedrock-runtime.REGION.amazonaws.com/openai/v1` with a region such as `us-east-1`.
    BedrockRegionUrl,
    /// A proxy that cannot be used (`reason`: why, in the HTTP client's words).
    BadProxy { reason: String },
    /// An attached file that is neither an image Keypool takes (PNG, JPEG, WebP, GIF) nor
    /// UTF-8 text.
    UnsupportedFile,
    /// An attached file over `max` bytes (20 MB for an image, 1 MB for text).
    FileTooLarge { max: usize },
    /// An image whose bytes cannot be decoded, or that is too large to (`reason`).
    ImageUnreadable { reason: String },
    /// An image of `pixels` pixels, more than the `max` an image of its depth may have (decoding
    /// and scaling it would hold too much memory).
    ImageTooLarge { pixels: u64, max: u64 },
    /// More than `max` attachments on one message.
    TooManyAttachments { max: usize },
    /// A Redis URL the team cannot use (not `redis://` or `rediss://`, or unreadable).
    BadRedisUrl,
    /// A team name other than 1 to 64 of `A-Z a-z 0-9 . _ -`.
    BadTeamName,
    /// A team secret that is not 64 hex digits (`found`: how many characters it had).
    BadTeamSecret { found: usize },
    /// No team secret was given and none is kept: generate one or paste another member's.
    TeamSecretRequired,
    /// A text to import keys from holds none.
    NoKeysFound,
    /// A bulk change names keys of more than one provider (or none).
    KeysOfSeveralProviders,
    /// Empty, or only spaces, where something must be written (a route's glob, its model).
    Blank,
    /// A route's glob with characters this matcher does not read (`[`, `]`, `{`, `}`, spaces,
    /// controls): only `*` (any run) and `?` (one character) are wildcards.
    BadGlob,
    /// A provider id that names no provider.
    UnknownProvider,
    /// A local API token that is not the endpoint's token now.
    TokenMismatch,
    /// The local API's token is needed (no connected agent holds it) and was not given.
    TokenRequired,
    /// The local API is off: turn it on first (it makes the token agents are given).
    LocalApiOff,
    /// A token's name other than 1 to 64 of `A-Z a-z 0-9 . _ - @`.
    BadTokenName,
    /// Another named token (or a server's member) has this name, in any case.
    TokenNameTaken,
    /// A key helper asked for an agent that cannot run one (only Claude Code can).
    NoKeyHelper,
    /// Folder trust turned off for an agent that has no such setting (only Gemini CLI has).
    NoFolderTrust,
    /// An expiry that is not ahead of now: the token would be refused from the start.
    ExpiryPassed,
}

/// One rule broken by one input field, named as the service's input names it (snake_case);
/// empty when the rule is about the input as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub rule: Rule,
}

impl FieldError {
    pub fn new(field: &str, rule: Rule) -> FieldError {
        FieldError { field: field.to_owned(), rule }
    }
}
