//! What an image file says besides its pixels (EXIF with a phone's GPS position, XMP, IPTC,
//! comments, text chunks, edit times), taken out of the copy a provider receives, without
//! decoding or re-encoding the picture: the bytes of its pixels, its colour profile, its
//! transparency and its animation stay as they were.
//!
//! Each format is walked by its container (JPEG segments, PNG chunks, WebP's RIFF chunks, GIF's
//! blocks); what is kept is a list of the parts that draw the picture, so anything else (a
//! vendor's segment, an unknown chunk) goes too. A file the walk cannot follow is `None`: the
//! caller then sends a copy encoded from its pixels, which carries nothing else either.

use image::ImageFormat;

/// `bytes` (an image of `format`) without its metadata; `None` when its container cannot be
/// followed to its end.
pub(crate) fn strip(bytes: &[u8], format: ImageFormat) -> Option<Vec<u8>> {
    match format {
        ImageFormat::Jpeg => jpeg(bytes),
        ImageFormat::Png => png(bytes),
        ImageFormat::WebP => webp(bytes),
        ImageFormat::Gif => gif(bytes),
        _ => None,
    }
}

/// JPEG: every marker segment but APP0 (JFIF), APP2 holding an ICC profile and APP14 (Adobe's
/// colour transform) among the application segments, and no comment (COM); nothing after EOI.
fn jpeg(bytes: &[u8]) -> Option<Vec<u8>> {
    const SOI: u8 = 0xD8;
    const EOI: u8 = 0xD9;
    const SOS: u8 = 0xDA;
    const COM: u8 = 0xFE;
    if bytes.get(..2)? != [0xFF, SOI] {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(&bytes[..2]);
    let mut at = 2;
    loop {
        // A marker: 0xFF, any fill bytes (0xFF), the marker's code.
        if *bytes.get(at)? != 0xFF {
            return None;
        }
        while *bytes.get(at)? == 0xFF {
            at += 1;
        }
        let marker = bytes[at];
        at += 1;
        match marker {
            EOI => {
                out.extend_from_slice(&[0xFF, EOI]);
                return Some(out);
            }
            0xD0..=0xD7 | 0x01 => {
                out.extend_from_slice(&[0xFF, marker]);
                continue;
            }
            _ => {}
        }
        let length = usize::from(u16::from_be_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]));
        if length < 2 {
            return None;
        }
        let segment = bytes.get(at..at + length)?;
        let keep = match marker {
            0xE0 | 0xEE => true,
            0xE2 => segment[2..].starts_with(b"ICC_PROFILE\0"),
            0xE1..=0xEF | COM => false,
            _ => true,
        };
        if keep {
            out.extend_from_slice(&[0xFF, marker]);
            out.extend_from_slice(segment);
        }
        at += length;
        if marker == SOS {
            // The entropy-coded data runs to the next marker that is neither a stuffed 0xFF00
            // nor a restart marker.
            let start = at;
            loop {
                let ff = at + bytes.get(at..)?.iter().position(|&b| b == 0xFF)?;
                match *bytes.get(ff + 1)? {
                    0x00 | 0xD0..=0xD7 | 0xFF => at = ff + 1,
                    _ => {
                        at = ff;
                        break;
                    }
                }
            }
            out.extend_from_slice(&bytes[start..at]);
        }
    }
}

/// PNG: the critical chunks (IHDR, PLTE, IDAT, IEND), animation (acTL, fcTL, fdAT) and those
/// that say how to show the pixels (tRNS, gAMA, cHRM, sRGB, iCCP, sBIT, bKGD, pHYs); not eXIf,
/// tEXt, zTXt, iTXt, tIME or any other. Nothing after IEND.
fn png(bytes: &[u8]) -> Option<Vec<u8>> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    const KEPT: [&[u8; 4]; 14] = [
        b"IHDR", b"PLTE", b"IDAT", b"IEND", b"acTL", b"fcTL", b"fdAT", b"tRNS", b"gAMA", b"cHRM", b"sRGB", b"iCCP",
        b"sBIT", b"bKGD",
    ];
    if !bytes.starts_with(SIGNATURE) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(SIGNATURE);
    let mut at = SIGNATURE.len();
    loop {
        let length = u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?) as usize;
        let kind = bytes.get(at + 4..at + 8)?;
        let end = at.checked_add(12)?.checked_add(length)?;
        let chunk = bytes.get(at..end)?;
        if KEPT.iter().any(|k| k.as_slice() == kind) || kind == b"pHYs" {
            out.extend_from_slice(chunk);
        }
        if kind == b"IEND" {
            return Some(out);
        }
        at = end;
    }
}

/// WebP: the image's chunks (VP8, VP8L, VP8X, ALPH, ANIM, ANMF, ICCP); not EXIF or XMP, whose
/// flags in VP8X are cleared. The RIFF size is written again.
fn webp(bytes: &[u8]) -> Option<Vec<u8>> {
    if bytes.get(..4)? != b"RIFF" || bytes.get(8..12)? != b"WEBP" {
        return None;
    }
    let riff_end = 8usize.checked_add(u32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?) as usize)?;
    let body = bytes.get(12..riff_end)?;
    let mut chunks = Vec::with_capacity(body.len());
    let mut at = 0;
    while at < body.len() {
        let kind = body.get(at..at + 4)?;
        let size = u32::from_le_bytes(body.get(at + 4..at + 8)?.try_into().ok()?) as usize;
        let padded = size.checked_add(size & 1)?;
        let end = at.checked_add(8)?.checked_add(padded)?.min(body.len());
        let chunk = body.get(at..end)?;
        match kind {
            b"EXIF" | b"XMP " => {}
            b"VP8X" => {
                let mut chunk = chunk.to_vec();
                // Flags: ICC 0x20, alpha 0x10, EXIF 0x08, XMP 0x04, animation 0x02.
                *chunk.get_mut(8)? &= !(0x08 | 0x04);
                chunks.extend_from_slice(&chunk);
            }
            _ => chunks.extend_from_slice(chunk),
        }
        at = end;
    }
    let mut out = Vec::with_capacity(12 + chunks.len());
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&u32::try_from(4 + chunks.len()).ok()?.to_le_bytes());
    out.extend_from_slice(b"WEBP");
    out.extend_from_slice(&chunks);
    Some(out)
}

/// GIF: the header, colour tables, frames, their graphic controls and the looping extension
/// (NETSCAPE2.0, ANIMEXTS1.0); not comments or other applications' extensions (XMP). Nothing
/// after the trailer.
fn gif(bytes: &[u8]) -> Option<Vec<u8>> {
    /// The sub-blocks starting at `at`, up to and with their terminator: where they end.
    fn sub_blocks(bytes: &[u8], mut at: usize) -> Option<usize> {
        loop {
            let size = usize::from(*bytes.get(at)?);
            at += 1 + size;
            if size == 0 {
                return (at <= bytes.len()).then_some(at);
            }
        }
    }
    /// Bytes of a colour table a packed field announces.
    fn table(packed: u8) -> usize {
        if packed & 0x80 == 0 {
            0
        } else {
            3 << ((packed & 0x07) + 1)
        }
    }
    if !matches!(bytes.get(..6)?, b"GIF87a" | b"GIF89a") {
        return None;
    }
    let screen_end = 13 + table(*bytes.get(10)?);
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(bytes.get(..screen_end)?);
    let mut at = screen_end;
    loop {
        match *bytes.get(at)? {
            0x3B => {
                out.push(0x3B);
                return Some(out);
            }
            0x2C => {
                let descriptor_end = at + 10 + table(*bytes.get(at + 9)?);
                // The LZW code size, then the image's sub-blocks.
                let end = sub_blocks(bytes, descriptor_end + 1)?;
                out.extend_from_slice(bytes.get(at..end)?);
                at = end;
            }
            0x21 => {
                let label = *bytes.get(at + 1)?;
                let end = sub_blocks(bytes, at + 2)?;
                let keep = match label {
                    0xF9 | 0x01 => true,
                    0xFF => matches!(bytes.get(at + 2..at + 14), Some(b"\x0bNETSCAPE2.0") | Some(b"\x0bANIMEXTS1.0")),
                    _ => false,
                };
                if keep {
                    out.extend_from_slice(bytes.get(at..end)?);
                }
                at = end;
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2×2 picture of `format`, encoded by the `image` crate.
    fn encoded(format: ImageFormat) -> Vec<u8> {
        let picture = image::RgbaImage::from_fn(2, 2, |x, y| image::Rgba([x as u8 * 200, y as u8 * 200, 90, 255]));
        let mut out = std::io::Cursor::new(Vec::new());
        image::DynamicImage::ImageRgba8(picture).write_to(&mut out, format).unwrap();
        out.into_inner()
    }

    fn pixels(bytes: &[u8], format: ImageFormat) -> Vec<u8> {
        image::load_from_memory_with_format(bytes, format).unwrap().to_rgba8().into_raw()
    }

    fn png_chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut chunk = (data.len() as u32).to_be_bytes().to_vec();
        chunk.extend_from_slice(kind);
        chunk.extend_from_slice(data);
        let mut crc_input = kind.to_vec();
        crc_input.extend_from_slice(data);
        chunk.extend_from_slice(&crc32(&crc_input).to_be_bytes());
        chunk
    }

    fn crc32(data: &[u8]) -> u32 {
        let mut crc = 0xFFFF_FFFFu32;
        for &byte in data {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
            }
        }
        !crc
    }

    const SECRET: &[u8] = b"48 51 24.0 N, 2 17 40.0 E";

    #[test]
    fn a_png_loses_its_text_exif_and_time_and_keeps_its_pixels() {
        let plain = encoded(ImageFormat::Png);
        // After IHDR: an eXIf, a tEXt and a tIME chunk.
        let ihdr_end = 8 + 12 + 13;
        let mut tagged = plain[..ihdr_end].to_vec();
        tagged.extend(png_chunk(b"eXIf", SECRET));
        tagged.extend(png_chunk(b"tEXt", &[b"Location\0", SECRET].concat()));
        tagged.extend(png_chunk(b"tIME", &[7, 233, 1, 2, 3, 4, 5]));
        tagged.extend_from_slice(&plain[ihdr_end..]);
        tagged.extend_from_slice(b"trailing data after IEND");
        assert_eq!(
            pixels(&tagged, ImageFormat::Png),
            pixels(&plain, ImageFormat::Png),
            "the tagged file is a good PNG"
        );
        let stripped = strip(&tagged, ImageFormat::Png).expect("a PNG is followed to its end");
        assert_eq!(stripped, plain, "exactly the chunks that draw the picture are left");
    }

    #[test]
    fn a_webp_loses_exif_and_xmp_and_their_flags() {
        let plain = encoded(ImageFormat::WebP);
        let image_chunk = plain[12..].to_vec();
        let mut vp8x = b"VP8X".to_vec();
        vp8x.extend_from_slice(&10u32.to_le_bytes());
        vp8x.extend_from_slice(&[0x08 | 0x04, 0, 0, 0, 1, 0, 0, 1, 0, 0]);
        let mut exif = b"EXIF".to_vec();
        exif.extend_from_slice(&(SECRET.len() as u32).to_le_bytes());
        exif.extend_from_slice(SECRET);
        if SECRET.len() % 2 == 1 {
            exif.push(0);
        }
        let body = [b"WEBP".as_slice(), &vp8x, &image_chunk, &exif].concat();
        let tagged = [b"RIFF".as_slice(), &(body.len() as u32).to_le_bytes(), &body].concat();
        let stripped = strip(&tagged, ImageFormat::WebP).expect("a WebP is followed to its end");
        assert!(!stripped.windows(SECRET.len()).any(|w| w == SECRET), "the EXIF chunk is gone");
        assert_eq!(stripped[12 + 8] & 0x0C, 0, "VP8X no longer announces EXIF or XMP");
        assert_eq!(u32::from_le_bytes(stripped[4..8].try_into().unwrap()) as usize, stripped.len() - 8, "RIFF size");
        assert_eq!(pixels(&stripped, ImageFormat::WebP), pixels(&plain, ImageFormat::WebP), "the same picture");
    }

    #[test]
    fn a_gif_loses_its_comment_and_xmp_and_keeps_its_loop() {
        let plain = encoded(ImageFormat::Gif);
        let trailer = plain.len() - 1;
        let mut comment = vec![0x21, 0xFE, SECRET.len() as u8];
        comment.extend_from_slice(SECRET);
        comment.push(0);
        let looping =
            [0x21, 0xFF, 0x0B, b'N', b'E', b'T', b'S', b'C', b'A', b'P', b'E', b'2', b'.', b'0', 3, 1, 0, 0, 0];
        let mut xmp = vec![0x21, 0xFF, 0x0B];
        xmp.extend_from_slice(b"XMP DataXMP");
        xmp.push(SECRET.len() as u8);
        xmp.extend_from_slice(SECRET);
        xmp.push(0);
        let tagged = [&plain[..trailer], &comment, &looping, &xmp, &plain[trailer..]].concat();
        let stripped = strip(&tagged, ImageFormat::Gif).expect("a GIF is followed to its end");
        assert!(!stripped.windows(SECRET.len()).any(|w| w == SECRET), "the comment and XMP are gone");
        assert!(stripped.windows(11).any(|w| w == b"NETSCAPE2.0"), "the loop count stays");
        assert_eq!(pixels(&stripped, ImageFormat::Gif), pixels(&plain, ImageFormat::Gif), "the same picture");
    }

    #[test]
    fn a_jpeg_keeps_jfif_and_its_icc_profile_and_loses_exif_xmp_and_comments() {
        let plain = encoded(ImageFormat::Jpeg);
        let app1 = [&[0xFF, 0xE1][..], &((2 + 6 + SECRET.len()) as u16).to_be_bytes(), b"Exif\0\0", SECRET].concat();
        let icc =
            [&[0xFF, 0xE2][..], &((2 + 12 + 2 + 4) as u16).to_be_bytes(), b"ICC_PROFILE\0", &[1, 1], b"icc!"].concat();
        let com = [&[0xFF, 0xFE][..], &((2 + SECRET.len()) as u16).to_be_bytes(), SECRET].concat();
        let tagged = [&plain[..2], &app1, &icc, &com, &plain[2..], b"after EOI".as_slice()].concat();
        let stripped = strip(&tagged, ImageFormat::Jpeg).expect("a JPEG is followed to its end");
        assert_eq!(stripped, [&plain[..2], &icc, &plain[2..]].concat(), "EXIF, comment and trailer gone; ICC kept");
    }

    #[test]
    fn a_cut_file_is_not_followed() {
        for format in [ImageFormat::Jpeg, ImageFormat::Png, ImageFormat::WebP, ImageFormat::Gif] {
            let whole = encoded(format);
            assert!(strip(&whole, format).is_some(), "{format:?}: the whole file is followed");
            assert_eq!(strip(&whole[..whole.len() / 2], format), None, "{format:?}: half of it is not");
        }
    }
}
