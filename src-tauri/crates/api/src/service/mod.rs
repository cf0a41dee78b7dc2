//! The services: what Keypool does with keys, providers and chats, callable alike from the IPC
//! layer, tests, benches and a CLI. They speak the domain (the store's rows, the pool's
//! statuses, the completion service's events), never the transport: nothing here knows about
//! IPC, JSON shapes or Tauri.

mod agents;
mod alerts;
mod attachments;
mod bulk;
mod chats;
mod error;
mod events;
mod keys;
mod ledger;
mod local_api;
mod members;
mod outbox;
mod preferences;
mod problem;
mod providers;
mod records;
mod reply_error;
mod report;
mod settings;
mod team;
mod usage;
mod vault;
mod write_path;

pub use agents::{
    cache_drop, Agent, AgentHome, AgentStatus, Agents, AgentsOverview, CacheDrop, ConnectOptions, Connected,
    Connection, Source, SourceUsage, SourceUse, SourcesReport, TightenedFile, TokenState, AGENTS,
};
pub(crate) use alerts::PoolAlerts;
pub use alerts::{PoolAlert, RecentAlert, RECENT as RECENT_ALERTS};
pub use attachments::{
    AttachmentInfo, AttachmentKind, Attachments, Variant, MAX_ATTACHMENTS, MAX_IMAGE_BYTES, MAX_TEXT_BYTES,
    SEND_LONG_SIDE,
};
pub use bulk::{
    BulkKeys, BulkPatch, ImportOptions, ImportPreview, ImportProgress, ImportState, KeyReading, BATCH,
    CHECK_CONCURRENCY,
};
pub use chats::{
    AttachmentRef, Chat, ChatPatch, ChatProgress, Chats, Message, MessageStatus, NewChat, Role, SearchResult, Snippet,
    Turn, NEW_CHAT_TITLE,
};
pub use error::{AgentFile, AgentFileProblem, Conflict, Result, ServiceError};
pub use events::{EventSink, NoEvents, Notifications};
pub(crate) use keys::StoreLoader;
pub use keys::{ApiKey, KeyPatch, Keys, NewKey, PoolStatus};
pub use ledger::Ledger;
pub use local_api::{
    LocalApi, LocalApiStatus, ModelRoute, NamedToken, Resolution, RouteState, RouteTest, RouteTestOutcome, RouteView,
    TokenRules, TokenSpend, Via, DEFAULT_PORT, ROUTE_TEST_SOURCE,
};
pub use members::{
    valid_name as valid_member_name, BookSnapshot, BookWatch, Budget, BudgetPeriod, BudgetSpent, BudgetView, Member,
    MemberBook, MemberLimits, MemberSource, Members, Spent,
};
pub use outbox::{LedgerOutbox, LedgerRow};
pub use preferences::{Language, Page, Preferences, Theme, UiPreferences, PREFERENCES_FILE_NAME};
pub use problem::{FieldError, Rule};
pub use providers::{is_local, is_local_url, ModelList, NewProvider, Provider, ProviderPatch, Providers};
pub(crate) use records::Records;
pub use reply_error::{BlockedKeyInfo, BlockedState, BreakageKind, LastAnswer, ReplyError};
pub use report::{sum_lines, By, LineOf, ReportRow, UsageLine, UsageReport};
pub use settings::{AppSettings, Proxy, Settings, SettingsPatch, DEFAULT_RETENTION_DAYS, MAX_WAIT_LIMIT_SECONDS};
pub use team::{Membership, SecretPlace, TeamDown, TeamJoin, TeamPhase, TeamView, CONNECTING_GRACE};
pub use usage::{
    Bucket, KeySpend, NewPrice, NoSaveDialog, Point, Price, SaveDialog, SentWith, Series, Spend, Summary, Totals,
    Usage, DAY_MS,
};
pub use vault::{KeychainProblem, KeychainState, Migrated, Vault};
pub(crate) use write_path::WritePath;
pub use write_path::Written;
