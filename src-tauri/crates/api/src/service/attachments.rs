//! Attachments: images (PNG, JPEG, WebP, GIF) and plain-text files a user sends with a message.
//!
//! A file is checked and stored when it is attached, before any message refers to it: its type
//! is read from its bytes (never from its name), text must be UTF-8, and an image's size is read
//! from its header and refused above [`MAX_PIXELS`] (or what [`MAX_DECODED_BYTES`] holds at its
//! depth) before a byte of it is decoded: a file of a few kilobytes can claim gigapixels, and
//! decoding and scaling what it claims would hold a gigabyte. Decoding and scaling an accepted
//! image stays under about 200 MB: the picture itself (at most [`MAX_DECODED_BYTES`]) and the
//! copy scaled from it (the filter needing a large buffer is used only where it fits).
//!
//! An image gets a copy to send (the long side at most [`SEND_LONG_SIDE`] px, small enough for
//! every provider, turned as its EXIF orientation says) that carries nothing but the picture: no
//! EXIF (a phone's GPS position), XMP, IPTC, comments or text chunks ([`metadata`]); and a
//! thumbnail. The original is kept as it came. Every file is stored by its content
//! ([`FileStore`]), so the same screenshot attached twice is kept once.

mod metadata;

use std::io::Cursor;
use std::sync::Arc;

use image::imageops::FilterType;
use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits};
use keypool_llm::Attachment;
/// What an attachment is, as the service speaks of it (the store's own word for it).
pub use keypool_store::attachments::AttachmentKind;
use keypool_store::attachments::{self as rows, AttachmentRow, FileStore, LinkedAttachment};
use keypool_store::Database;

use crate::service::error::{Result, ServiceError};
use crate::service::problem::Rule;

/// At most this many attachments per message.
pub const MAX_ATTACHMENTS: usize = 10;
/// An image file of at most this many bytes.
pub const MAX_IMAGE_BYTES: usize = 20 * 1024 * 1024;
/// A text file of at most this many bytes.
pub const MAX_TEXT_BYTES: usize = 1024 * 1024;
/// The long side of the copy sent to providers, in pixels: what OpenAI, Anthropic and Gemini all
/// take without scaling it down themselves (Anthropic advises at most 1568; they scale, we do not
/// need to send more).
pub const SEND_LONG_SIDE: u32 = 2048;
/// An image sent as it came must also be at most this large (Anthropic takes 5 MB per image, of
/// base64; this leaves room for the encoding).
const SEND_MAX_BYTES: usize = 3_700_000;
/// The long side of a thumbnail: sharp at twice the transcript's size.
pub const THUMBNAIL_LONG_SIDE: u32 = 320;
/// How long an attachment never sent is kept (it may still be in a composer).
const UNSENT_KEPT_MS: i64 = super::DAY_MS;
/// Decoding refuses pictures wider or taller than this: a few kilobytes can claim gigapixels.
const MAX_SIDE: u32 = 16_384;
/// The most pixels an image attached may have (a 36-megapixel camera's photo; a phone's is 12).
pub const MAX_PIXELS: u64 = 36_000_000;
/// The most bytes an image attached may take decoded, whatever its depth: 36 megapixels of 8-bit
/// RGBA, 18 of 16-bit. With the copy scaled from it, decoding and scaling stay under 200 MB.
pub const MAX_DECODED_BYTES: u64 = 144 * 1024 * 1024;
/// Scaling with a triangle filter holds a buffer of 16 bytes per pixel of the source's width
/// by the copy's height; it is used only while that, the decoded picture and the copy stay
/// within this, otherwise the copy is made by averaging boxes of pixels (no buffer of its own).
const SCALE_BUDGET: u64 = 190_000_000;

/// A stored attachment, as the UI shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentInfo {
    /// Its content id (SHA-256 of the original).
    pub id: String,
    pub name: String,
    pub kind: AttachmentKind,
    pub media_type: String,
    pub size: u64,
    pub width: Option<u32>,
    pub height: Option<u32>,
}

impl AttachmentInfo {
    pub(crate) fn of(name: String, row: &AttachmentRow) -> AttachmentInfo {
        AttachmentInfo {
            id: row.sha256.clone(),
            name,
            kind: row.kind,
            media_type: row.media_type.clone(),
            size: row.size,
            width: row.width,
            height: row.height,
        }
    }
}

impl From<LinkedAttachment> for AttachmentInfo {
    fn from(linked: LinkedAttachment) -> Self {
        AttachmentInfo::of(linked.name, &linked.file)
    }
}

/// Which of an attachment's files to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Original,
    Thumbnail,
}

/// The four image formats a chat takes, sniffed from the first bytes.
fn image_format(bytes: &[u8]) -> Option<ImageFormat> {
    match image::guess_format(bytes) {
        Ok(format @ (ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::WebP | ImageFormat::Gif)) => Some(format),
        _ => None,
    }
}

/// Why an image is not decoded.
enum Undecoded {
    /// It has more pixels than it may: `max` for its depth.
    TooLarge {
        pixels: u64,
        max: u64,
    },
    Unreadable(image::ImageError),
}

impl From<image::ImageError> for Undecoded {
    fn from(error: image::ImageError) -> Self {
        Undecoded::Unreadable(error)
    }
}

impl Undecoded {
    fn rule(self) -> Rule {
        match self {
            Undecoded::TooLarge { pixels, max } => Rule::ImageTooLarge { pixels, max },
            Undecoded::Unreadable(error) => Rule::ImageUnreadable { reason: error.to_string() },
        }
    }
}

/// A decoded picture, and how its EXIF says to turn it.
struct Decoded {
    image: DynamicImage,
    orientation: Orientation,
}

/// The most pixels an image of `bytes_per_pixel` may have.
fn max_pixels(bytes_per_pixel: u64) -> u64 {
    MAX_PIXELS.min(MAX_DECODED_BYTES / bytes_per_pixel.max(1))
}

/// Decodes `bytes` once its header says it is small enough: its width and height at most
/// [`MAX_SIDE`], its pixels at most [`max_pixels`] of its depth.
fn decode(bytes: &[u8], format: ImageFormat) -> std::result::Result<Decoded, Undecoded> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_DECODED_BYTES);
    reader.limits(limits);
    let mut decoder = reader.into_decoder()?;
    let (width, height) = decoder.dimensions();
    let pixels = u64::from(width) * u64::from(height);
    let max = max_pixels(u64::from(decoder.color_type().bytes_per_pixel()));
    if pixels > max {
        return Err(Undecoded::TooLarge { pixels, max });
    }
    // An orientation that cannot be read is none: the picture is sent as it is stored.
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    Ok(Decoded { image: DynamicImage::from_decoder(decoder)?, orientation })
}

/// `image` at most `long_side` px on its long side: with a triangle filter where its buffer fits
/// [`SCALE_BUDGET`] beside the picture, by averaging boxes of pixels where it does not.
fn fitted(image: &DynamicImage, long_side: u32) -> DynamicImage {
    let (width, height) = (image.width(), image.height());
    if width.max(height) <= long_side {
        return image.clone();
    }
    if filter_fits(width, height, u64::from(image.color().bytes_per_pixel()), long_side) {
        image.resize(long_side, long_side, FilterType::Triangle)
    } else {
        image.thumbnail(long_side, long_side)
    }
}

/// Whether the triangle filter's buffer (16 bytes per pixel of the width by the copy's height,
/// its first pass) and the copy fit [`SCALE_BUDGET`] beside a decoded picture of `width` ×
/// `height` pixels of `bytes_per_pixel`, scaled to `long_side`.
fn filter_fits(width: u32, height: u32, bytes_per_pixel: u64, long_side: u32) -> bool {
    let ratio = f64::from(long_side) / f64::from(width.max(height));
    let (new_width, new_height) =
        ((f64::from(width) * ratio).round() as u64, (f64::from(height) * ratio).round() as u64);
    let decoded = u64::from(width) * u64::from(height) * bytes_per_pixel;
    decoded + u64::from(width) * new_height * 16 + new_width * new_height * bytes_per_pixel <= SCALE_BUDGET
}

/// `image` encoded: PNG when it has transparency or `lossless` is asked, else JPEG (quality 85).
/// Nothing but the pixels is written.
fn encoded(image: &DynamicImage, lossless: bool) -> std::result::Result<(Vec<u8>, &'static str), image::ImageError> {
    let mut out = Cursor::new(Vec::new());
    if lossless || image.color().has_alpha() {
        image.write_to(&mut out, ImageFormat::Png)?;
        Ok((out.into_inner(), "image/png"))
    } else {
        let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85);
        image.to_rgb8().write_with_encoder(encoder)?;
        Ok((out.into_inner(), "image/jpeg"))
    }
}

/// `image` at most `long_side` px on its long side, encoded: PNG when it has transparency, else
/// JPEG (quality 85).
pub fn scaled(image: &DynamicImage, long_side: u32) -> std::result::Result<(Vec<u8>, &'static str), image::ImageError> {
    encoded(&fitted(image, long_side), false)
}

fn media_type_of(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Png => "image/png",
        ImageFormat::Jpeg => "image/jpeg",
        ImageFormat::WebP => "image/webp",
        _ => "image/gif",
    }
}

/// A name to show and send: one line, no path, at most 255 characters; `file` when nothing is left.
fn clean_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or_default();
    let cleaned: String = base.chars().filter(|c| !c.is_control()).take(255).collect();
    match cleaned.trim() {
        "" => "file".to_owned(),
        trimmed => trimmed.to_owned(),
    }
}

/// Attaching, reading back, sending and forgetting attachments.
pub struct Attachments {
    db: Arc<Database>,
    files: FileStore,
}

impl Attachments {
    /// The attachments beside `db`, in its directory; forgets those attached more than a day
    /// before `now` and never sent (a composer closed with them).
    pub(crate) fn open(db: Arc<Database>, now: i64) -> Self {
        let data_dir = db.path().parent().map(std::path::Path::to_path_buf).unwrap_or_default();
        let files = FileStore::open(&data_dir).unwrap_or_else(|error| {
            tracing::error!(%error, "the attachments directory could not be opened");
            FileStore::at(&data_dir)
        });
        let attachments = Attachments { db, files };
        if let Err(error) = attachments.forget_unsent(now - UNSENT_KEPT_MS) {
            tracing::warn!(%error, "unsent attachments could not be forgotten");
        }
        attachments
    }

    pub fn files(&self) -> &FileStore {
        &self.files
    }

    /// Checks and stores a file the user attached; `now` is when (milliseconds since the epoch).
    /// Nothing is stored when it is refused.
    pub fn add(&self, name: &str, bytes: &[u8], now: i64) -> Result<AttachmentInfo> {
        let name = clean_name(name);
        let row = match image_format(bytes) {
            Some(format) => self.store_image(bytes, format, now)?,
            None => self.store_text(bytes, now)?,
        };
        rows::insert(&*self.db.lock()?, &row)?;
        Ok(AttachmentInfo::of(name, &row))
    }

    fn store_image(&self, bytes: &[u8], format: ImageFormat, now: i64) -> Result<AttachmentRow> {
        if bytes.len() > MAX_IMAGE_BYTES {
            return Err(ServiceError::invalid("data", Rule::FileTooLarge { max: MAX_IMAGE_BYTES }));
        }
        let unreadable = |error: image::ImageError| {
            ServiceError::invalid("data", Rule::ImageUnreadable { reason: error.to_string() })
        };
        let Decoded { mut image, orientation } =
            decode(bytes, format).map_err(|undecoded| ServiceError::invalid("data", undecoded.rule()))?;
        let turned = orientation != Orientation::NoTransforms;
        image.apply_orientation(orientation);
        let (width, height) = (image.width(), image.height());
        let media_type = media_type_of(format);
        let original = self.files.put(bytes).map_err(ServiceError::Files)?;
        let long_side = width.max(height);
        // Sent as it came, less its metadata, where it is small enough and needs no turning;
        // otherwise encoded from its pixels (which carry nothing else).
        let as_it_came = (long_side <= SEND_LONG_SIDE && bytes.len() <= SEND_MAX_BYTES && !turned)
            .then(|| metadata::strip(bytes, format))
            .flatten();
        let fitted_copy = fitted(&image, SEND_LONG_SIDE);
        drop(image);
        let send = match as_it_came {
            Some(stripped) if stripped == bytes => (original.clone(), media_type.to_owned()),
            Some(stripped) => (self.files.put(&stripped).map_err(ServiceError::Files)?, media_type.to_owned()),
            None => {
                let lossless = format == ImageFormat::Png && long_side <= SEND_LONG_SIDE;
                let (data, media_type) = encoded(&fitted_copy, lossless).map_err(unreadable)?;
                (self.files.put(&data).map_err(ServiceError::Files)?, media_type.to_owned())
            }
        };
        let thumbnail = if long_side <= THUMBNAIL_LONG_SIDE && !turned {
            (original.clone(), media_type.to_owned())
        } else {
            let (data, media_type) = scaled(&fitted_copy, THUMBNAIL_LONG_SIDE).map_err(unreadable)?;
            (self.files.put(&data).map_err(ServiceError::Files)?, media_type.to_owned())
        };
        Ok(AttachmentRow {
            sha256: original,
            kind: AttachmentKind::Image,
            media_type: media_type.to_owned(),
            size: bytes.len() as u64,
            width: Some(width),
            height: Some(height),
            send: Some(send),
            thumbnail: Some(thumbnail),
            created_at: now,
        })
    }

    fn store_text(&self, bytes: &[u8], now: i64) -> Result<AttachmentRow> {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return Err(ServiceError::invalid("data", Rule::UnsupportedFile));
        };
        // NUL does not occur in text: a binary format that happens to be valid UTF-8.
        if text.contains('\0') {
            return Err(ServiceError::invalid("data", Rule::UnsupportedFile));
        }
        if bytes.len() > MAX_TEXT_BYTES {
            return Err(ServiceError::invalid("data", Rule::FileTooLarge { max: MAX_TEXT_BYTES }));
        }
        Ok(AttachmentRow {
            sha256: self.files.put(bytes).map_err(ServiceError::Files)?,
            kind: AttachmentKind::Text,
            media_type: "text/plain".to_owned(),
            size: bytes.len() as u64,
            width: None,
            height: None,
            send: None,
            thumbnail: None,
            created_at: now,
        })
    }

    /// The bytes of one of an attachment's files, with their media type.
    pub fn read(&self, id: &str, variant: Variant) -> Result<(String, Vec<u8>)> {
        let row = self.row(id)?;
        let (file, media_type) = match (variant, &row.thumbnail) {
            (Variant::Thumbnail, Some((file, media_type))) => (file.clone(), media_type.clone()),
            _ => (row.sha256.clone(), row.media_type.clone()),
        };
        Ok((media_type, self.files.read(&file).map_err(ServiceError::Files)?))
    }

    fn row(&self, id: &str) -> Result<AttachmentRow> {
        if !rows::is_content_id(id) {
            return Err(ServiceError::not_found("attachment", id));
        }
        rows::get(&*self.db.lock()?, id)?.ok_or_else(|| ServiceError::not_found("attachment", id))
    }

    /// Checks the attachments of a message to send (`(id, name)`, in order): each must have
    /// been attached, and there may be at most [`MAX_ATTACHMENTS`].
    pub(crate) fn check(&self, attachments: &[(String, String)]) -> Result<Vec<(String, String)>> {
        if attachments.len() > MAX_ATTACHMENTS {
            return Err(ServiceError::invalid("attachments", Rule::TooManyAttachments { max: MAX_ATTACHMENTS }));
        }
        attachments.iter().map(|(id, name)| self.row(id).map(|row| (row.sha256, clean_name(name)))).collect()
    }

    /// An attachment as a provider receives it: the copy to send of an image, the text of a file.
    pub(crate) fn to_send(&self, linked: &LinkedAttachment) -> Result<Attachment> {
        Ok(match (&linked.file.kind, &linked.file.send) {
            (AttachmentKind::Image, send) => {
                let (file, media_type) =
                    send.clone().unwrap_or_else(|| (linked.file.sha256.clone(), linked.file.media_type.clone()));
                let data = self.files.read(&file).map_err(ServiceError::Files)?;
                Attachment::Image { media_type, data: Arc::from(data) }
            }
            (AttachmentKind::Text, _) => {
                let bytes = self.files.read(&linked.file.sha256).map_err(ServiceError::Files)?;
                Attachment::Text { name: linked.name.clone(), text: String::from_utf8_lossy(&bytes).into_owned() }
            }
        })
    }

    /// Attachment `id` as a provider receives it, under `name` (for tools that drive the
    /// completion service directly: benches).
    pub fn to_send_by_id(&self, id: &str, name: &str) -> Result<Attachment> {
        self.to_send(&LinkedAttachment { name: name.to_owned(), file: self.row(id)? })
    }

    /// Deletes the files of `unused` rows (already removed from the database) that no remaining
    /// row needs. A file that cannot be removed stays, unreferenced, and is logged.
    pub(crate) fn remove_files(&self, unused: &[AttachmentRow]) {
        for row in unused {
            for id in row.file_ids() {
                let in_use = match self.db.lock() {
                    Ok(conn) => rows::file_in_use(&conn, id).unwrap_or(true),
                    Err(_) => true,
                };
                if !in_use {
                    if let Err(error) = self.files.remove(id) {
                        tracing::warn!(file = id, %error, "an unused attachment file could not be removed");
                    }
                }
            }
        }
    }

    /// Forgets attachments attached before `before` and never sent, with their files.
    pub fn forget_unsent(&self, before: i64) -> Result<usize> {
        let unused = {
            let mut conn = self.db.lock()?;
            let tx = conn.transaction()?;
            let candidates = rows::unlinked_before(&tx, before)?;
            let unused = rows::forget_unused(&tx, &candidates)?;
            tx.commit()?;
            unused
        };
        self.remove_files(&unused);
        Ok(unused.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_paths_and_control_characters() {
        assert_eq!(clean_name("../../etc/passwd"), "passwd", "no path");
        assert_eq!(clean_name("C:\\shots\\a\nb.png"), "ab.png", "no Windows path, no line break");
        assert_eq!(clean_name("  "), "file", "something to show");
    }

    #[test]
    fn only_the_four_formats_are_images() {
        assert_eq!(image_format(b"\x89PNG\r\n\x1a\n...."), Some(ImageFormat::Png), "PNG's signature");
        assert_eq!(image_format(b"GIF89a...."), Some(ImageFormat::Gif), "GIF's");
        assert_eq!(image_format(b"BM........"), None, "a BMP is not taken");
        assert_eq!(image_format(b"hello, world"), None, "text is not an image");
    }

    /// What decoding and scaling an accepted image may hold, by the limits' arithmetic: the
    /// decoded picture and the copy made from it (by boxes, where the triangle filter's buffer
    /// would not fit the budget).
    #[test]
    fn decoding_and_scaling_an_accepted_image_stays_under_200_mb() {
        const MB: u64 = 1_000_000;
        // The depths of PNG, JPEG, WebP and GIF: 8 or 16 bits, one to four channels.
        for bytes_per_pixel in [1, 2, 3, 4, 6, 8] {
            let decoded = max_pixels(bytes_per_pixel) * bytes_per_pixel;
            assert!(decoded <= MAX_DECODED_BYTES, "{bytes_per_pixel} bytes a pixel: {decoded} decoded");
            let copy = u64::from(SEND_LONG_SIDE).pow(2) * bytes_per_pixel;
            assert!(decoded + copy < 200 * MB, "{bytes_per_pixel} bytes a pixel: {} MB in all", (decoded + copy) / MB);
        }
        const { assert!(SCALE_BUDGET < 200 * MB, "the triangle filter is used only within the budget") };
        assert_eq!(max_pixels(4), MAX_PIXELS, "8-bit RGBA: the pixel limit");
        assert_eq!(max_pixels(8), MAX_DECODED_BYTES / 8, "16-bit RGBA: what the bytes hold");
    }

    #[test]
    fn a_phones_photo_is_scaled_by_the_filter_and_a_larger_one_by_boxes() {
        assert!(filter_fits(4032, 3024, 3, SEND_LONG_SIDE), "12 megapixels: the triangle filter");
        assert!(!filter_fits(6000, 6000, 4, SEND_LONG_SIDE), "36 megapixels: boxes, no buffer");
        assert!(!filter_fits(11_500, 11_500, 4, SEND_LONG_SIDE), "and never the filter's gigabyte");
        let board = DynamicImage::ImageLuma8(image::GrayImage::from_fn(64, 48, |x, y| {
            image::Luma([((x + y) % 2 * 255) as u8])
        }));
        let copy = fitted(&board, 32);
        assert_eq!((copy.width(), copy.height()), (32, 24), "the long side as asked, the ratio kept");
        assert_eq!(fitted(&board, 100).width(), 64, "a picture within the side is not enlarged");
    }
}
