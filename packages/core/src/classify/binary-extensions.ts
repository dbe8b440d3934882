// Extensions whose files are never text: classified as assets from the name alone, never read.
// Extensions that some common text format also uses (`.ts`, `.mts`, `.obj`, `.pkl`, `.mo`, `.stl`,
// `.rtf`, `.eps`, `.dat`) are left out on purpose: their names say text and the content check
// catches the binary ones. `.pt` is PyTorch weights here, not a Zope page template.
import type { AssetSubcategory } from '../types.js';

const EXTENSIONS_BY_SUBCATEGORY: Readonly<Record<AssetSubcategory, readonly string[]>> = {
  image: [
    '.apng', '.avif', '.bmp', '.cr2', '.cur', '.dds', '.dng', '.exr', '.gif', '.heic', '.heif', '.icns',
    '.ico', '.jfif', '.jp2', '.jpe', '.jpeg', '.jpg', '.jxl', '.nef', '.pbm', '.pgm', '.png', '.ppm', '.psd',
    '.qoi', '.svgz', '.tga', '.tif', '.tiff', '.webp', '.xcf',
  ],
  audio: [
    '.aac', '.aif', '.aifc', '.aiff', '.amr', '.ape', '.au', '.caf', '.flac', '.m4a', '.mid', '.midi',
    '.mka', '.mp3', '.oga', '.ogg', '.opus', '.ra', '.snd', '.wav', '.weba', '.wma', '.wv',
  ],
  video: [
    '.3g2', '.3gp', '.asf', '.avi', '.f4v', '.flv', '.m2ts', '.m2v', '.m4v', '.mkv', '.mov', '.mp4', '.mpeg',
    '.mpg', '.mxf', '.ogv', '.qt', '.rm', '.rmvb', '.swf', '.vob', '.webm', '.wmv',
  ],
  pdf: ['.pdf'],
  binary: [
    // Archives and packages (a `.zip` is binary even when it happens to contain no NUL byte).
    '.7z', '.aar', '.apk', '.appx', '.br', '.bz2', '.cab', '.cpio', '.crx', '.deb', '.dmg', '.ear', '.egg',
    '.gz', '.iso', '.jar', '.lz', '.lz4', '.lzma', '.msi', '.nupkg', '.rar', '.rpm', '.tar', '.tbz2', '.tgz',
    '.txz', '.vsix', '.war', '.whl', '.xpi', '.xz', '.z', '.zip', '.zst',
    // Executables, libraries, object and byte code.
    '.a', '.beam', '.bin', '.class', '.dex', '.dll', '.dylib', '.elc', '.exe', '.ko', '.lib', '.node', '.o',
    '.pyc', '.pyd', '.pyo', '.rlib', '.so', '.sys', '.wasm',
    // Fonts.
    '.eot', '.otf', '.pfb', '.ttc', '.ttf', '.woff', '.woff2',
    // Office documents and e-books.
    '.doc', '.docx', '.epub', '.numbers', '.odg', '.odp', '.ods', '.odt', '.pages', '.ppt', '.pptx',
    '.xls', '.xlsm', '.xlsx',
    // Databases, data and model blobs.
    '.accdb', '.arrow', '.db', '.feather', '.h5', '.hdf5', '.lockb', '.mdb', '.npy', '.npz', '.onnx',
    '.parquet', '.pickle', '.pt', '.pth', '.safetensors', '.sqlite', '.sqlite3', '.tflite',
    // Keystores, design files and other opaque formats.
    '.blend', '.fbx', '.glb', '.jks', '.keystore', '.p12', '.pfx', '.sketch', '.fig',
  ],
};

/** Lower-case extension (with its dot) → asset subcategory. */
export const BINARY_EXTENSIONS: ReadonlyMap<string, AssetSubcategory> = new Map(
  Object.entries(EXTENSIONS_BY_SUBCATEGORY).flatMap(([subcategory, extensions]) =>
    extensions.map((ext) => [ext, subcategory as AssetSubcategory] as const),
  ),
);
